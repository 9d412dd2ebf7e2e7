-- The tail of the log: each table's latest inputs and events, appended here
-- before they are filed into `inputs` and `events` (SQLite only).
--
-- `inputs` and `events` are clustered by game (0006), and tables interleave:
-- every move wrote its rows into its game's own pages of the two tables, and
-- SQLite writes each page a transaction touches whole into the WAL. At 2,000
-- busy tables that was ~150 MB/s of WAL for ~10,000 rows/s, and as much
-- again copied back by checkpoints; the disk fell behind and the kernel held
-- up the writer. These tables are keyed by an increasing number, so a group
-- of moves lands on the last few pages, whatever the games. The journal
-- files a game's rows from here into `inputs` and `events` (from its memory)
-- when its hand ends, when its rows have waited a few seconds, or when a
-- reader asks, and then deletes the filed rows from the front of the tail.
-- A store opening files whatever is left here first (see store/tail.rs).
CREATE TABLE inputs_tail (
    id      INTEGER PRIMARY KEY,
    game_id TEXT NOT NULL,
    n       BIGINT NOT NULL,
    seq     BIGINT NOT NULL,
    body    TEXT NOT NULL
);

CREATE TABLE events_tail (
    id       INTEGER PRIMARY KEY,
    game_id  TEXT NOT NULL,
    seq      BIGINT NOT NULL,
    at_us    BIGINT NOT NULL,
    hand     BIGINT NOT NULL,
    audience TEXT NOT NULL,
    audience_player BIGINT,
    body     TEXT NOT NULL
);
