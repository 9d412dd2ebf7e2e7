-- The log's two tables clustered by game (WITHOUT ROWID: the rows live in
-- their primary key's B-tree). A table's move appends to its game's events
-- and inputs; with a rowid table, a primary key index and an index by hand,
-- each such write touched four B-tree pages scattered across the file (one
-- per index, since games interleave), and every touched page is written
-- whole to the WAL at each commit. Now it touches two. The index by hand is
-- gone: a game's events are found by its primary key, and a hand's by the
-- sequence numbers its row in `hands` gives (or by scanning its game's).

CREATE TABLE events_by_game (
    game_id  TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seq      BIGINT NOT NULL,
    at_us    BIGINT NOT NULL,
    hand     BIGINT NOT NULL,
    audience TEXT NOT NULL,
    audience_player BIGINT,
    body     TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
INSERT INTO events_by_game SELECT game_id, seq, at_us, hand, audience, audience_player, body FROM events;
DROP TABLE events;
ALTER TABLE events_by_game RENAME TO events;

CREATE TABLE inputs_by_game (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    n       BIGINT NOT NULL,
    seq     BIGINT NOT NULL,
    body    TEXT NOT NULL,
    PRIMARY KEY (game_id, n)
) WITHOUT ROWID;
INSERT INTO inputs_by_game SELECT game_id, n, seq, body FROM inputs;
DROP TABLE inputs;
ALTER TABLE inputs_by_game RENAME TO inputs;
