-- Limits that hold across a cluster's nodes (cluster mode; crates/server/src/limits/ledger.rs):
-- what each player holds (tables waiting to start, seats, games of robots), counted per
-- node so that a dead node's share stops counting with its lease; and rates (tokens
-- earned over time, failures forgiven over time) kept by the database's clock.
CREATE TABLE quota_holds (
    -- 'account:7' or 'address:192.0.2.1' (an IPv6 address by its /64)
    holder  TEXT NOT NULL,
    -- what is held: 'waiting_table', 'seat', 'robot_game'
    kind    TEXT NOT NULL,
    node_id TEXT NOT NULL,
    n       INTEGER NOT NULL CHECK (n >= 0),
    PRIMARY KEY (holder, kind, node_id)
);

CREATE TABLE quota_rates (
    -- what is paced, and for whom ('tables_opened account:7', 'login address:...')
    key   TEXT PRIMARY KEY,
    -- a token bucket: when the bucket is full again (GCRA's theoretical arrival
    -- time); strikes: when `level` was last set
    at    TIMESTAMPTZ NOT NULL,
    -- strikes only: failures not yet forgiven at `at`
    level DOUBLE PRECISION NOT NULL DEFAULT 0
);
