-- Each finished hand's inputs again, as one row, for restarts (kept
-- column-for-column the same as the Postgres migration).
--
-- `inputs` stays the game's whole record, one row per input. But a restart
-- must read every input of every unfinished game to replay it, and reading
-- them row by row was most of its time (on Postgres, whose heap holds a
-- game's inputs on as many pages as it has inputs, 3.5-7 ms a game,
-- measured on 2,000 games). So when a hand ends, the transaction that
-- stores its row also copies the game's inputs not yet in a block into one
-- row here; a restart reads a game's blocks, then only the inputs after its
-- last block. Clustered by game, as `inputs` (0006).
CREATE TABLE input_blocks (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    -- the first and last input (`inputs.n`) the block holds
    first_n BIGINT NOT NULL,
    last_n  BIGINT NOT NULL,
    -- each input as "n seq body", in order, joined by U+001E (which JSON
    -- never holds unescaped)
    body    TEXT NOT NULL,
    PRIMARY KEY (game_id, first_n)
) WITHOUT ROWID;

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
) WITHOUT ROWID;
