-- The idempotency keys of game imports (SQLite; kept column-for-column the
-- same as the Postgres migration). Times are microseconds since the Unix epoch,
-- as in 0001.
--
-- A request to POST /api/v1/games/import or /api/v1/games/import-mj-server
-- with an Idempotency-Key header stores its game and its key in one
-- transaction; a retry with the same key is answered from here, and stores
-- nothing. The primary key decides between two requests with the same key
-- at once: only one stores its game. Keys older than a day are forgotten.
CREATE TABLE idempotency_keys (
    -- the header's value: 1 to 255 visible ASCII characters
    idempotency_key TEXT PRIMARY KEY,
    -- the operation it came with ('import_game', 'import_mj_server_log')
    operation       TEXT NOT NULL,
    -- the SHA-256 of the request's body, in hex: a retry must send the same body
    body_sha256     TEXT NOT NULL,
    -- the answer given: the game stored (no reference: the answer is what
    -- was answered), its state and hands dealt then
    game_id         TEXT NOT NULL,
    state           TEXT NOT NULL,
    hands           BIGINT NOT NULL,
    created_us      BIGINT NOT NULL
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_us);
