-- Cluster mode (`serve --nats`, Postgres only; see docs/architecture.md,
-- "Several nodes"). The database is the one judge of who plays a table.

-- One row per running node process. A node renews its lease (a heartbeat)
-- every second; a row whose `expires_at` has passed, by the database's own
-- clock, is a dead node, whatever the node itself believes.
CREATE TABLE cluster_nodes (
    -- a fresh id at every start of the process (its incarnation)
    id           TEXT PRIMARY KEY,
    -- `--node-name` (two incarnations may share a name for a while)
    name         TEXT NOT NULL,
    -- where its HTTP listener is, as the node sees it
    address      TEXT NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL,
    heartbeat_at TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    -- what it reported at its last heartbeat
    tables       BIGINT NOT NULL,
    sockets      BIGINT NOT NULL,
    -- 'member', or 'leaving' once it hands its tables over (SIGTERM)
    state        TEXT NOT NULL
);

-- Which node plays each table that is not closed, and the table's fencing
-- epoch: it grows by one at every change of owner. The journal writes a
-- table's batch only in a transaction that finds (and share-locks) this row
-- with the epoch the writing node was given, on a node whose lease has not
-- expired; a node that lost the table has its writes refused by the
-- database itself. `node_id` NULL: nobody plays it (its node left or died):
-- the next live node to look takes it over.
CREATE TABLE table_owners (
    game_id  TEXT PRIMARY KEY,
    node_id  TEXT,
    epoch    BIGINT NOT NULL,
    since    TIMESTAMPTZ NOT NULL
);
CREATE INDEX table_owners_by_node ON table_owners (node_id);
