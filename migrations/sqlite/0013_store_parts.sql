-- How many files (parts) the store's games are split over (see
-- crates/server/src/store/parts.rs): recorded when the database is first
-- opened, read at every later opening. No row: a database from before
-- parts, opened by nothing since (one part).
CREATE TABLE store_parts (
    only_row BOOLEAN PRIMARY KEY CHECK (only_row),
    parts    BIGINT NOT NULL CHECK (parts >= 1)
);
