-- Admin option management (SQLite; kept column-for-column the same as the
-- Postgres migration). JSON is stored as TEXT, times in microseconds since
-- the Unix epoch, as in 0001.

-- The custom presets: a built-in preset and the options set over it.
CREATE TABLE presets (
    -- the name folded to lower case: names are unique ignoring case
    name_key    TEXT PRIMARY KEY,
    -- the name as the admin wrote it (looked up exactly)
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    -- the built-in preset it starts from
    based_on    TEXT NOT NULL,
    -- the options it sets over based_on (JSON object, by catalogue name)
    options     TEXT NOT NULL,
    created_us  BIGINT NOT NULL,
    updated_us  BIGINT NOT NULL
);

-- The defaults of new tables as an admin last set them: at most one row.
-- No row: the server's flags (--preset, --option-file, --timeout) are in force.
CREATE TABLE option_defaults (
    id          BIGINT PRIMARY KEY CHECK (id = 1),
    preset      TEXT NOT NULL,
    -- options set over the table's preset (JSON object)
    options     TEXT NOT NULL,
    updated_us  BIGINT NOT NULL,
    -- the admin who set them (no reference: the log outlives accounts)
    updated_by_id   BIGINT NOT NULL,
    updated_by_name TEXT NOT NULL
);

-- Every change an admin made: who, when, what, before and after. Append-only.
CREATE TABLE audit_log (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at_us         BIGINT NOT NULL,
    -- the admin's account; no reference, so that the entry outlives it
    actor_user_id BIGINT NOT NULL,
    actor_name    TEXT NOT NULL,
    -- e.g. 'preset.create', 'defaults.set', 'user.update'
    action        TEXT NOT NULL,
    -- what was changed: 'defaults', 'preset/NAME', 'user/ID'
    target        TEXT NOT NULL,
    -- the thing before and after the change (JSON; NULL when it did not exist)
    before_json   TEXT,
    after_json    TEXT
);
CREATE INDEX audit_log_by_target ON audit_log (target, id);
