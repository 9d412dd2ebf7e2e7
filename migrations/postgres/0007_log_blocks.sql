-- Each finished hand's inputs again, as one row, for restarts (kept
-- column-for-column the same as the SQLite migration).
--
-- `inputs` stays the game's whole record, one row per input. But a game's
-- inputs lie on as many heap pages as there are inputs, games interleaving
-- in the order they were played, and a restart must read every input of
-- every unfinished game to replay it: measured on 2,000 games, 3.5-7 ms a
-- game. So when a hand ends, the game's inputs not yet in a block are
-- copied into one row here (after the transaction that stores the hand's
-- row, by the journal's packer: a block only saves reading, and one lost
-- in a crash costs a restart more rows, never a row); a restart reads a
-- game's blocks, then only the inputs after its last block.
CREATE TABLE input_blocks (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    -- the first and last input (`inputs.n`) the block holds
    first_n BIGINT NOT NULL,
    last_n  BIGINT NOT NULL,
    -- each input as "n seq body", in order, joined by U+001E (which JSON
    -- never holds unescaped)
    body    TEXT NOT NULL,
    PRIMARY KEY (game_id, first_n)
);

-- The same for events: when a hand ends, the game's events not yet in a
-- block become one row here, and a restart reads the blocks that hold
-- events of the game's last two hands, then only the events after its last
-- block (a game's ~600 events of two hands lay on ~250 pages of the events
-- table on Postgres).
CREATE TABLE event_blocks (
    game_id   TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    -- the first and last event (`events.seq`) the block holds
    first_seq BIGINT NOT NULL,
    last_seq  BIGINT NOT NULL,
    -- the hand of its last event
    last_hand BIGINT NOT NULL,
    -- each event as "seq at_us hand audience audience_player body" (-1 for
    -- no player), in order, joined by U+001E
    body      TEXT NOT NULL,
    PRIMARY KEY (game_id, first_seq)
);

-- LZ4 where the server has it: compressing a block of a hand's events took
-- pglz 1.4 ms, LZ4 0.1 ms (the write is a new block at every hand's end).
DO $$
BEGIN
    ALTER TABLE input_blocks ALTER COLUMN body SET COMPRESSION lz4;
    ALTER TABLE event_blocks ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END
$$;
