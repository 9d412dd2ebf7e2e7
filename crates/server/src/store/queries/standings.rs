//! Player standings: each player's record over every game it played.
//!
//! A logged-in player is known by its account: every game its account sat
//! at counts for it. A guest is known by name: every game where that name
//! sat as a guest counts for it (a guest cannot take an account's name, but
//! a name used by guests before it was registered keeps its own line).
//! Robots are named after their seat (`Robot 1`...), so a robot's line
//! gathers every robot that sat there; a robot and a person of the same name
//! are kept apart.

use serde::{Deserialize, Serialize};
use sqlx::{FromRow, Row};

use super::{Conditions, Paging, Param, Window};
use crate::store::TableState;
use crate::store::row::from_row;
use crate::store::{Store, StoreError};

/// One player's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Standing {
    /// The player's name.
    pub name: String,
    /// The player's account (its number); absent for a guest or a robot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<i64>,
    /// A robot played under this name.
    pub robot: bool,
    /// Games started (being played or over) with the player seated.
    pub games_played: i64,
    /// Finished games the player ended with the highest score (a tie counts
    /// for each player in it; a game that ended before any hand finished
    /// counts for nobody).
    pub games_won: i64,
    /// Hands finished (won or washed out) with the player seated.
    pub hands_played: i64,
    /// Hands the player won.
    pub mah_jongs: i64,
    /// The mean of the player's hand scores (points before settlement) over
    /// its hands, to two decimals; `null` before its first hand.
    pub mean_score: Option<f64>,
    /// The sum of its settlement deltas: points won less points paid.
    pub net_settlement: i64,
}

/// A page of standings: best net settlement first, then by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StandingsPage {
    /// The players.
    pub standings: Vec<Standing>,
    /// Where the page sits.
    #[serde(flatten)]
    pub paging: Paging,
}

/// Every seat of a started game, with the player's name and kind; the other
/// parts sum what these seats did.
/// `{open}` is [`TableState::Open`]'s name; `{filter}` is where a filter on
/// the name goes.
const SEATED: &str = "seated AS ( \
    SELECT s.game_id, s.seat, s.name, s.user_id, CAST(CASE WHEN s.robot IS NULL THEN 0 ELSE 1 END AS BIGINT) AS is_robot, \
    g.state FROM seats s JOIN games g ON g.id = s.game_id WHERE g.state <> '{open}'{filter})";

/// Per seat of a game: its hands, wins, points and deltas; and its total
/// after the game's last finished hand, with the best such total of the game.
const TALLIES: &str = "per_seat AS ( \
    SELECT game_id, player, COUNT(*) AS hands, SUM(won) AS wins, SUM(points) AS points, SUM(delta) AS net \
    FROM hand_players WHERE game_id IN (SELECT game_id FROM seated) GROUP BY game_id, player), \
  last_hand AS ( \
    SELECT game_id, MAX(hand) AS hand FROM hand_players \
    WHERE game_id IN (SELECT game_id FROM seated) GROUP BY game_id), \
  finals AS ( \
    SELECT hp.game_id, hp.player, hp.total FROM hand_players hp \
    JOIN last_hand l ON l.game_id = hp.game_id AND l.hand = hp.hand), \
  tops AS (SELECT game_id, MAX(total) AS top FROM finals GROUP BY game_id)";

from_row! {
    /// A line of standings, as the query sums it.
    struct StandingColumns {
        name: String,
        user_id: Option<i64>,
        is_robot: i64,
        games_played: i64,
        games_won: i64,
        hands_played: i64,
        mah_jongs: i64,
        points: i64,
        net_settlement: i64,
    }
}

impl Store {
    /// A page of standings, of every player, or of the one named, or of
    /// one account.
    pub async fn standings(
        &self,
        player: Option<&str>,
        account: Option<i64>,
        window: Window,
    ) -> Result<StandingsPage, StoreError> {
        let mut c = Conditions::default();
        if let Some(name) = player {
            c.push("s.name = ?", Param::Text(name.to_string()));
        }
        if let Some(account) = account {
            c.push("s.user_id = ?", Param::Int(account));
        }
        let seated = SEATED.replace("{open}", TableState::Open.as_str()).replace("{filter}", &c.and());
        let over = TableState::Over.as_str();
        let count = format!(
            "WITH {seated} SELECT COUNT(*) AS total FROM \
             (SELECT name, is_robot, user_id FROM seated GROUP BY name, is_robot, user_id) players"
        );
        let total: i64 = c.bind(sqlx::query(&count)).fetch_one(self.pool()).await?.try_get("total")?;
        let n = c.next();
        let select = format!(
            "WITH {seated}, {TALLIES} \
             SELECT p.name, p.user_id, p.is_robot, COUNT(*) AS games_played, \
               CAST(SUM(CASE WHEN p.state = '{over}' AND f.total = t.top THEN 1 ELSE 0 END) AS BIGINT) AS games_won, \
               CAST(COALESCE(SUM(h.hands), 0) AS BIGINT) AS hands_played, \
               CAST(COALESCE(SUM(h.wins), 0) AS BIGINT) AS mah_jongs, \
               CAST(COALESCE(SUM(h.points), 0) AS BIGINT) AS points, \
               CAST(COALESCE(SUM(h.net), 0) AS BIGINT) AS net_settlement \
             FROM seated p \
             LEFT JOIN per_seat h ON h.game_id = p.game_id AND h.player = p.seat \
             LEFT JOIN finals f ON f.game_id = p.game_id AND f.player = p.seat \
             LEFT JOIN tops t ON t.game_id = p.game_id \
             GROUP BY p.name, p.is_robot, p.user_id \
             ORDER BY net_settlement DESC, p.name, p.is_robot, p.user_id LIMIT ${n} OFFSET ${}",
            n + 1
        );
        let rows = c.bind(sqlx::query(&select)).bind(window.limit).bind(window.offset).fetch_all(self.pool()).await?;
        let standings = rows
            .iter()
            .map(|r| {
                let r = StandingColumns::from_row(r)?;
                Ok(Standing {
                    name: r.name,
                    account: r.user_id,
                    robot: r.is_robot != 0,
                    games_played: r.games_played,
                    games_won: r.games_won,
                    hands_played: r.hands_played,
                    mah_jongs: r.mah_jongs,
                    // Two decimals are all a table of standings shows.
                    mean_score: (r.hands_played > 0)
                        .then(|| (r.points as f64 / r.hands_played as f64 * 100.0).round() / 100.0),
                    net_settlement: r.net_settlement,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(StandingsPage { standings, paging: Paging::new(window, total) })
    }
}
