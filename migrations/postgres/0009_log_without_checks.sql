-- The log's tables on Postgres keep only their primary keys (measured at
-- 2,000 tables of robots, `--pause 2`: Postgres spent a fifth of its time
-- checking each new row's foreign key, the `SELECT ... FOR KEY SHARE` on
-- `games` run for every event and input, and a third inserting into the
-- two indexes of `events`; delivery p99 62-101 ms, 26-28 ms without).
--
-- - `events_by_hand` goes: a hand's events are found by the sequence
--   numbers of its row in `hands`, or (a hand being played) among its
--   game's events by the primary key, as SQLite always has (0006 there).
-- - The foreign keys of `events` and `inputs` go: the journal writes a
--   game's row in the transaction of its first rows, and a game is never
--   deleted (`ON DELETE CASCADE` had nothing to do).
DROP INDEX events_by_hand;
ALTER TABLE events DROP CONSTRAINT events_game_id_fkey;
ALTER TABLE inputs DROP CONSTRAINT inputs_game_id_fkey;
