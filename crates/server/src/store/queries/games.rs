//! Games: the filtered, paginated list, and one game with its players and
//! the options in force.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{FromRow, Row};

use super::{Conditions, Paging, Param, Window, json, source_of, state_of};
use crate::rules::GameOptions;
use crate::store::TableState;
use crate::store::dates::format_time;
use crate::store::records::{GameSource, Input};
use crate::store::row::from_row;
use crate::store::{Store, StoreError};

/// Which games to list. Every filter given must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameFilter {
    /// A player of that name sits at the game (robots have names too).
    pub player: Option<String>,
    /// That account sits at the game.
    pub account: Option<i64>,
    /// Open, being played, or over.
    pub state: Option<TableState>,
    /// Where the game came from.
    pub source: Option<GameSource>,
    /// Opened at or after this time (µs since the epoch).
    pub from_us: Option<i64>,
    /// Opened before this time.
    pub to_us: Option<i64>,
}

/// A player in a list of games.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PlayerSummary {
    /// The seat (the player id in the game).
    pub seat: i64,
    /// The name shown.
    pub name: String,
    /// A robot plays the seat.
    pub robot: bool,
}

/// A game in a list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GameSummary {
    /// The game's (and its table's) id.
    pub id: String,
    /// The table's name.
    pub name: String,
    /// The rule preset it started from.
    pub preset: String,
    /// `live`, `loaded` or `mj-server`.
    pub source: GameSource,
    /// `open`, `playing` or `over`.
    pub state: TableState,
    /// When the table opened, `YYYY-MM-DDTHH:MM:SSZ`.
    pub created: String,
    /// The same, in µs since the epoch.
    pub created_us: i64,
    /// When the game ended, if it has.
    pub finished: Option<String>,
    /// The same, in µs since the epoch.
    pub finished_us: Option<i64>,
    /// Hands dealt so far.
    pub hands: i64,
    /// The seated players, by seat.
    pub players: Vec<PlayerSummary>,
    /// Cumulative scores by player id.
    pub scores: [i64; 4],
}

/// A page of games, newest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GamePage {
    /// The games.
    pub games: Vec<GameSummary>,
    /// Where the page sits.
    #[serde(flatten)]
    pub paging: Paging,
}

/// A player of one game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GamePlayer {
    /// The seat (the player id in the game).
    pub seat: i64,
    /// The name shown.
    pub name: String,
    /// A robot's strategy; `null` for a person.
    #[schema(value_type = Option<crate::bots::Strategy>)]
    pub robot: Option<Value>,
    /// Penalties recorded against the player (`--disconnect-penalties`).
    pub penalty: i64,
}

/// One game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GameDetail {
    /// The game's id.
    pub id: String,
    /// The table's name.
    pub name: String,
    /// The rule preset it started from.
    pub preset: String,
    /// `live`, `loaded` or `mj-server`.
    pub source: GameSource,
    /// `open`, `playing` or `over`.
    pub state: TableState,
    /// When the table opened, `YYYY-MM-DDTHH:MM:SSZ`.
    pub created: String,
    /// The same, in µs since the epoch.
    pub created_us: i64,
    /// When the store last wrote the game, in µs since the epoch.
    pub updated_us: i64,
    /// When the game ended, if it has.
    pub finished: Option<String>,
    /// The same, in µs since the epoch.
    pub finished_us: Option<i64>,
    /// Hands dealt so far.
    pub hands: i64,
    /// Hands finished (won or washed out): those `/hands` lists.
    pub hands_finished: i64,
    /// The game manager's seat.
    pub manager: Option<i64>,
    /// The seated players, by seat.
    pub players: Vec<GamePlayer>,
    /// The options in force: the table's, with every change the manager made
    /// since, by catalogue name.
    #[schema(value_type = HashMap<String, crate::rules::options::OptionValue>)]
    pub options: serde_json::Map<String, Value>,
    /// Cumulative scores by player id.
    pub scores: [i64; 4],
}

from_row! {
    /// A game of a list, as stored.
    struct SummaryColumns {
        id: String,
        name: String,
        preset: String,
        source: String,
        state: String,
        created_us: i64,
        finished_us: Option<i64>,
        hands: i64,
        scores: String,
    }
}

from_row! {
    /// One game, as stored.
    struct DetailColumns {
        name: String,
        preset: String,
        source: String,
        state: String,
        settings: String,
        created_us: i64,
        updated_us: i64,
        finished_us: Option<i64>,
        hands: i64,
        scores: String,
        manager: Option<i64>,
        hands_finished: i64,
    }
}

from_row! {
    /// A seat, as stored.
    struct SeatColumns {
        game_id: String,
        seat: i64,
        name: String,
        robot: Option<String>,
        penalty: i64,
    }
}

impl Store {
    /// A page of the games that pass `filter`, newest first.
    pub async fn list_games(&self, filter: &GameFilter, window: Window) -> Result<GamePage, StoreError> {
        let mut c = Conditions::default();
        if let Some(name) = &filter.player {
            c.push("EXISTS (SELECT 1 FROM seats s WHERE s.game_id = g.id AND s.name = ?)", Param::Text(name.clone()));
        }
        if let Some(account) = filter.account {
            c.push("EXISTS (SELECT 1 FROM seats s WHERE s.game_id = g.id AND s.user_id = ?)", Param::Int(account));
        }
        if let Some(state) = filter.state {
            c.push("g.state = ?", Param::Text(state.as_str().into()));
        }
        if let Some(source) = filter.source {
            c.push("g.source = ?", Param::Text(source.as_str().into()));
        }
        if let Some(from) = filter.from_us {
            c.push("g.created_us >= ?", Param::Int(from));
        }
        if let Some(to) = filter.to_us {
            c.push("g.created_us < ?", Param::Int(to));
        }
        let count = format!("SELECT COUNT(*) AS total FROM games g WHERE 1 = 1{}", c.and());
        let total: i64 = c.bind(sqlx::query(&count)).fetch_one(self.pool()).await?.try_get("total")?;
        let n = c.next();
        let select = format!(
            "SELECT g.id, g.name, g.preset, g.source, g.state, g.created_us, g.finished_us, g.hands, g.scores \
             FROM games g WHERE 1 = 1{} ORDER BY g.created_us DESC, g.id DESC LIMIT ${n} OFFSET ${}",
            c.and(),
            n + 1
        );
        let rows = c.bind(sqlx::query(&select)).bind(window.limit).bind(window.offset).fetch_all(self.pool()).await?;
        let rows = rows.iter().map(SummaryColumns::from_row).collect::<Result<Vec<_>, _>>()?;
        let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let mut players = self.players_of(&ids).await?;
        let mut games = Vec::with_capacity(rows.len());
        for r in rows {
            games.push(GameSummary {
                players: players.remove(&r.id).unwrap_or_default(),
                scores: json(&r.id, "scores", &r.scores)?,
                name: r.name,
                preset: r.preset,
                source: source_of(&r.id, &r.source)?,
                state: state_of(&r.id, &r.state)?,
                created: format_time(r.created_us),
                created_us: r.created_us,
                finished: r.finished_us.map(format_time),
                finished_us: r.finished_us,
                hands: r.hands,
                id: r.id,
            });
        }
        Ok(GamePage { games, paging: Paging::new(window, total) })
    }

    /// The seated players of these games, by game, in seat order.
    async fn players_of(&self, ids: &[String]) -> Result<BTreeMap<String, Vec<PlayerSummary>>, StoreError> {
        let mut out: BTreeMap<String, Vec<PlayerSummary>> = BTreeMap::new();
        if ids.is_empty() {
            return Ok(out);
        }
        let list: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT game_id, seat, name, robot, penalty FROM seats WHERE game_id IN ({}) ORDER BY game_id, seat",
            list.join(", ")
        );
        let mut query = sqlx::query(&sql);
        for id in ids {
            query = query.bind(id.as_str());
        }
        for r in query.fetch_all(self.pool()).await? {
            let r = SeatColumns::from_row(&r)?;
            out.entry(r.game_id).or_default().push(PlayerSummary {
                seat: r.seat,
                name: r.name,
                robot: r.robot.is_some(),
            });
        }
        Ok(out)
    }

    /// One game; `None` if there is no such game.
    pub async fn game_detail(&self, id: &str) -> Result<Option<GameDetail>, StoreError> {
        // Its option changes are among its inputs.
        self.file_tail(&[id.to_string()]).await?;
        let Some(r) = sqlx::query_as::<_, DetailColumns>(
            "SELECT name, preset, source, state, settings, created_us, updated_us, finished_us, hands, scores, \
             manager, (SELECT COUNT(*) FROM hands h WHERE h.game_id = g.id) AS hands_finished \
             FROM games g WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(self.pool())
        .await?
        else {
            return Ok(None);
        };
        let mut players = Vec::new();
        for s in sqlx::query_as::<_, SeatColumns>(
            "SELECT game_id, seat, name, robot, penalty FROM seats WHERE game_id = $1 ORDER BY seat",
        )
        .bind(id)
        .fetch_all(self.pool())
        .await?
        {
            let robot = s.robot.map(|text| json::<Value>(id, "robot", &text)).transpose()?;
            players.push(GamePlayer { seat: s.seat, name: s.name, robot, penalty: s.penalty });
        }
        Ok(Some(GameDetail {
            id: id.to_string(),
            source: source_of(id, &r.source)?,
            state: state_of(id, &r.state)?,
            name: r.name,
            preset: r.preset,
            created: format_time(r.created_us),
            created_us: r.created_us,
            updated_us: r.updated_us,
            finished: r.finished_us.map(format_time),
            finished_us: r.finished_us,
            hands: r.hands,
            hands_finished: r.hands_finished,
            manager: r.manager,
            players,
            options: self.options_in_force(id, &r.settings).await?.to_json_map(),
            scores: json(id, "scores", &r.scores)?,
        }))
    }

    /// The table's options with every option change since applied, in order:
    /// what the game plays by now (or played by at its end).
    async fn options_in_force(&self, id: &str, settings: &str) -> Result<GameOptions, StoreError> {
        let settings: Value = json(id, "settings", settings)?;
        let mut options: GameOptions =
            json(id, "settings.options", &settings.get("options").map(Value::to_string).unwrap_or_default())?;
        // Only option changes matter; the pattern keeps the engine's commands
        // (most of a game's inputs) in the database.
        let changes: Vec<String> =
            sqlx::query_scalar("SELECT body FROM inputs WHERE game_id = $1 AND body LIKE $2 ORDER BY n")
                .bind(id)
                .bind("%\"set_option\"%")
                .fetch_all(self.pool())
                .await?;
        for body in changes {
            if let Input::SetOption { name, value } = json::<Input>(id, "input", &body)? {
                options
                    .set_checked(&name, &value)
                    .map_err(|e| StoreError::Corrupt { game: id.to_string(), why: format!("option {name}: {e}") })?;
            }
        }
        Ok(options)
    }
}
