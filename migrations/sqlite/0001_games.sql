-- The game store (SQLite). Kept column-for-column the same as the Postgres
-- migration: the code speaks one dialect to both (see src/store/mod.rs).
-- Times are microseconds since the Unix epoch; JSON is stored as TEXT.

-- One row per game (a table's game, live or imported): a projection, kept
-- current in the same transaction as the events that change it.
CREATE TABLE games (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    preset      TEXT NOT NULL,
    -- 'live' (played here), 'loaded' (from an exported log), 'mj-server' (an imported reference log)
    source      TEXT NOT NULL,
    -- 'open', 'playing' or 'over'
    state       TEXT NOT NULL,
    -- the table's settings when it opened (JSON; written with its first batch); later option changes are inputs
    settings    TEXT,
    created_us  BIGINT NOT NULL,
    updated_us  BIGINT NOT NULL,
    finished_us BIGINT,
    hands       BIGINT NOT NULL,
    -- cumulative scores by player id (JSON array of four)
    scores      TEXT NOT NULL,
    manager     BIGINT,
    -- the last sequence number of the event stream
    last_seq    BIGINT NOT NULL,
    -- the table's random stream position (walls, dice, seats), as decimal text
    rng_pos     TEXT NOT NULL
);
CREATE INDEX games_by_state ON games (state, created_us);
CREATE INDEX games_by_created ON games (created_us);

-- Who sits where. A person's seat token is kept only as its SHA-256.
CREATE TABLE seats (
    game_id       TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seat          BIGINT NOT NULL,
    name          TEXT NOT NULL,
    -- a robot's strategy (JSON), NULL for a person
    robot         TEXT,
    token_sha256  TEXT,
    pause_request BIGINT NOT NULL,
    penalty       BIGINT NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX seats_by_name ON seats (name);

-- The event log: every message of the table's stream, exactly as sent, with
-- its audience. Append-only.
CREATE TABLE events (
    game_id  TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq      BIGINT NOT NULL,
    at_us    BIGINT NOT NULL,
    -- the hand the event belongs to (0: before the first deal)
    hand     BIGINT NOT NULL,
    -- 'everyone', 'only' or 'all_but' (with audience_player)
    audience TEXT NOT NULL,
    audience_player BIGINT,
    body     TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
CREATE INDEX events_by_hand ON events (game_id, hand, seq);

-- The inputs that rebuild the game through the engine (engine commands and
-- option changes), in order. Append-only.
CREATE TABLE inputs (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    n       BIGINT NOT NULL,
    -- the stream's last sequence number before the input's events
    seq     BIGINT NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (game_id, n)
);

-- One row per finished hand (won or washed out): a projection.
CREATE TABLE hands (
    game_id    TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    hand       BIGINT NOT NULL,
    round      TEXT NOT NULL,
    east       BIGINT NOT NULL,
    -- 'won', 'washed_out' or 'abandoned'
    outcome    TEXT NOT NULL,
    -- player ids (JSON array); how the first winner went out: 'self_drawn', 'discard', 'robbed_kong'
    winners    TEXT NOT NULL,
    how        TEXT,
    discarder  BIGINT,
    dice       TEXT,
    first_seq  BIGINT NOT NULL,
    last_seq   BIGINT NOT NULL,
    started_us BIGINT NOT NULL,
    ended_us   BIGINT NOT NULL,
    -- the settlement as the engine made it (JSON), NULL for a wash-out
    settlement TEXT,
    PRIMARY KEY (game_id, hand)
);

-- Each player's part in a finished hand: the score with its breakdown, the
-- change of score and the total after it. Standings are computed from here.
CREATE TABLE hand_players (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    hand    BIGINT NOT NULL,
    player  BIGINT NOT NULL,
    name    TEXT NOT NULL,
    wind    TEXT NOT NULL,
    won     BIGINT NOT NULL,
    points  BIGINT NOT NULL,
    -- the hand score with its breakdown (JSON), NULL when not scored
    score   TEXT,
    delta   BIGINT NOT NULL,
    total   BIGINT NOT NULL,
    PRIMARY KEY (game_id, hand, player)
);
CREATE INDEX hand_players_by_name ON hand_players (name);

-- The payments of each settlement, one row each.
CREATE TABLE payments (
    game_id     TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    hand        BIGINT NOT NULL,
    n           BIGINT NOT NULL,
    from_player BIGINT NOT NULL,
    to_player   BIGINT NOT NULL,
    amount      BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    PRIMARY KEY (game_id, hand, n)
);
