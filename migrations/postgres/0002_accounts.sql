-- Accounts and their sessions (postgres; kept column-for-column the same as the
-- other backend's). A password is kept only as its argon2id hash (PHC string),
-- a session token only as its SHA-256. Times are microseconds since the epoch.

CREATE TABLE users (
    id            BIGSERIAL PRIMARY KEY,
    -- as the person wrote it (trimmed)
    name          TEXT NOT NULL,
    -- the name folded to lower case: names are unique ignoring case
    name_key      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    -- 'player' or 'admin'
    role          TEXT NOT NULL,
    -- 1 when an admin has disabled the account
    disabled      BIGINT NOT NULL,
    created_us    BIGINT NOT NULL
);

CREATE TABLE sessions (
    token_sha256 TEXT PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_us   BIGINT NOT NULL,
    expires_us   BIGINT NOT NULL,
    last_used_us BIGINT NOT NULL
);
CREATE INDEX sessions_by_user ON sessions (user_id);

-- A seat taken by a logged-in player belongs to the account: standings and
-- game filters go by account (NULL: a guest or a robot).
ALTER TABLE seats ADD COLUMN user_id BIGINT;
CREATE INDEX seats_by_user ON seats (user_id);
