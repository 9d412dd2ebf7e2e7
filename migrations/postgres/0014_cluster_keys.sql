-- The keys that seal every cluster message on NATS (crates/server/src/cluster/seal.rs):
-- only processes that reach this database hold them, so a stranger on the NATS
-- server can neither read what nodes say nor speak for one. The first node
-- makes key 1; `mahjong-server cluster-key rotate` adds the next, announced
-- some seconds before it is used so that every node holds it by then.
CREATE TABLE cluster_keys (
    id        BIGINT PRIMARY KEY,
    -- 32 random bytes, as 64 hexadecimal digits
    secret    TEXT NOT NULL CHECK (length(secret) = 64),
    -- when nodes start sealing with it (the database's clock)
    active_at TIMESTAMPTZ NOT NULL
);
