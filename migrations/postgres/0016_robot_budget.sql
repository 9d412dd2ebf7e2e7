-- The budget of games of robots alone (crates/server/src/limits/budget.rs;
-- Postgres, kept column-for-column the same as the SQLite migration).

-- The budget as an admin last set it: at most one row. No row: the
-- server's flags (--robot-hands-per-hour, --robot-hands-per-day,
-- --robot-games-kept-for) are in force.
CREATE TABLE robot_budget (
    id              BIGINT PRIMARY KEY CHECK (id = 1),
    hands_per_hour  BIGINT NOT NULL,
    hands_per_day   BIGINT NOT NULL,
    -- seconds a game of robots alone is stored after its last change
    kept_for_s      BIGINT NOT NULL,
    updated_us      BIGINT NOT NULL,
    -- the admin who set it (no reference: the row outlives accounts)
    updated_by_id   BIGINT NOT NULL,
    updated_by_name TEXT NOT NULL
);

-- The games someone keeps: a game of robots alone kept here is never
-- forgotten. (No reference to `games`, as on SQLite, where the games are
-- split over several files.)
CREATE TABLE kept_games (
    game_id      TEXT PRIMARY KEY,
    kept_us      BIGINT NOT NULL,
    -- the account that kept it (no reference: the row outlives accounts)
    kept_by_id   BIGINT NOT NULL,
    kept_by_name TEXT NOT NULL
);
