-- The cluster's own name: every node on this database reads the same one and
-- puts it in the NATS subjects it shares with the others (the lobby, ended
-- sessions, tables waiting to be taken over), so that two clusters on one
-- NATS server (another database) never hear each other.
CREATE TABLE cluster_identity (
    only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
    id       TEXT NOT NULL
);
