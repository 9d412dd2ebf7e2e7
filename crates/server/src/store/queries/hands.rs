//! A game's finished hands: who won and how, each player's score with its
//! breakdown, the settlement and its payments.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Paging, Window, json};
use crate::store::records::{HandOutcome, PaymentRow};
use crate::store::row::from_row;
use crate::store::{Store, StoreError};

/// One player's part in a finished hand.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HandPlayer {
    /// The player id (seat).
    pub player: i64,
    /// The player's name.
    pub name: String,
    /// The player's seat wind this hand.
    pub wind: String,
    /// The player went out (won the hand).
    pub won: bool,
    /// The hand score's points (0 when not scored).
    pub points: i64,
    /// The hand score with its breakdown, as in the `hand_scored` event;
    /// `null` when the hand was not scored.
    #[schema(value_type = Option<crate::rules::scoring::HandScore>)]
    pub score: Option<Value>,
    /// The change of the player's score in the settlement.
    pub delta: i64,
    /// The player's cumulative score after the hand.
    pub total: i64,
}

/// A finished hand (won and settled, or washed out).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HandDetail {
    /// The hand's number in the game, from 1.
    pub hand: i64,
    /// The prevailing wind.
    pub round: String,
    /// The player who was East.
    pub east: i64,
    /// `won` or `washed_out`.
    pub outcome: HandOutcome,
    /// The winners' player ids.
    pub winners: Vec<i64>,
    /// How the first winner went out: `self_drawn`, `discard` or `robbed_kong`.
    pub how: Option<String>,
    /// The player who supplied the winning tile.
    pub discarder: Option<i64>,
    /// The dice thrown for the deal.
    pub dice: Option<[u8; 2]>,
    /// The sequence number of the hand's first event (`hand_started`).
    pub first_seq: i64,
    /// The sequence number of its last (`settled` or `washed_out`).
    pub last_seq: i64,
    /// When it was dealt, in µs since the epoch.
    pub started_us: i64,
    /// When it ended.
    pub ended_us: i64,
    /// Each player's part, by player id.
    pub players: Vec<HandPlayer>,
    /// The settlement as in the `settled` event (indexed by seat wind);
    /// `null` for a wash-out.
    #[schema(value_type = Option<crate::rules::settlement::Settlement>)]
    pub settlement: Option<Value>,
    /// The settlement's payments, between player ids, in order.
    pub payments: Vec<PaymentRow>,
}

/// A page of a game's finished hands, in the order they were played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HandPage {
    /// The game's id.
    pub game: String,
    /// The hands.
    pub hands: Vec<HandDetail>,
    /// Where the page sits.
    #[serde(flatten)]
    pub paging: Paging,
}

/// The hands asked for: a page, or one.
#[derive(Clone, Copy, Debug)]
enum Which {
    Page(Window),
    One(i64),
}

from_row! {
    /// A `hands` row, as stored.
    struct HandColumns {
        hand: i64,
        round: String,
        east: i64,
        outcome: String,
        winners: String,
        how: Option<String>,
        discarder: Option<i64>,
        dice: Option<String>,
        first_seq: i64,
        last_seq: i64,
        started_us: i64,
        ended_us: i64,
        settlement: Option<String>,
    }
}

from_row! {
    /// A `hand_players` row, as stored.
    struct PlayerColumns {
        hand: i64,
        player: i64,
        name: String,
        wind: String,
        won: i64,
        points: i64,
        score: Option<String>,
        delta: i64,
        total: i64,
    }
}

/// A `payments` row, as stored: its hand, then the payment's own columns.
struct PaymentColumns {
    hand: i64,
    payment: PaymentRow,
}

impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for PaymentColumns {
    fn from_row(row: &'r sqlx::any::AnyRow) -> Result<Self, sqlx::Error> {
        use sqlx::Row as _;
        Ok(PaymentColumns { hand: row.try_get("hand")?, payment: PaymentRow::from_row(row)? })
    }
}

impl Store {
    /// A page of a game's finished hands (the caller checks that the game
    /// exists: a game without finished hands has an empty page).
    pub async fn list_hands(&self, id: &str, window: Window) -> Result<HandPage, StoreError> {
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM hands WHERE game_id = $1").bind(id).fetch_one(self.pool()).await?;
        let hands = self.hands(id, Which::Page(window)).await?;
        Ok(HandPage { game: id.to_string(), hands, paging: Paging::new(window, total) })
    }

    /// One finished hand; `None` if the game has no such finished hand.
    pub async fn hand_detail(&self, id: &str, hand: i64) -> Result<Option<HandDetail>, StoreError> {
        Ok(self.hands(id, Which::One(hand)).await?.pop())
    }

    /// The hands asked for, with their players and payments.
    async fn hands(&self, id: &str, which: Which) -> Result<Vec<HandDetail>, StoreError> {
        const COLUMNS: &str = "hand, round, east, outcome, winners, how, discarder, dice, first_seq, last_seq, \
                               started_us, ended_us, settlement";
        let rows = match which {
            Which::Page(w) => {
                let sql = format!("SELECT {COLUMNS} FROM hands WHERE game_id = $1 ORDER BY hand LIMIT $2 OFFSET $3");
                sqlx::query_as::<_, HandColumns>(&sql)
                    .bind(id)
                    .bind(w.limit)
                    .bind(w.offset)
                    .fetch_all(self.pool())
                    .await?
            }
            Which::One(n) => {
                let sql = format!("SELECT {COLUMNS} FROM hands WHERE game_id = $1 AND hand = $2");
                sqlx::query_as::<_, HandColumns>(&sql).bind(id).bind(n).fetch_all(self.pool()).await?
            }
        };
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else { return Ok(Vec::new()) };
        let (lo, hi) = (first.hand, last.hand);
        let mut players = self.hand_players(id, lo, hi).await?;
        let mut payments = self.payments(id, lo, hi).await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let outcome = HandOutcome::from_name(&r.outcome).ok_or_else(|| StoreError::Corrupt {
                game: id.to_string(),
                why: format!("hand {}: outcome '{}'", r.hand, r.outcome),
            })?;
            out.push(HandDetail {
                hand: r.hand,
                round: r.round,
                east: r.east,
                outcome,
                winners: json(id, "winners", &r.winners)?,
                how: r.how,
                discarder: r.discarder,
                dice: r.dice.map(|d| json(id, "dice", &d)).transpose()?,
                first_seq: r.first_seq,
                last_seq: r.last_seq,
                started_us: r.started_us,
                ended_us: r.ended_us,
                players: players.remove(&r.hand).unwrap_or_default(),
                settlement: r.settlement.map(|s| json(id, "settlement", &s)).transpose()?,
                payments: payments.remove(&r.hand).unwrap_or_default(),
            });
        }
        Ok(out)
    }

    /// The players' parts in hands `lo..=hi`, by hand, in player order.
    async fn hand_players(&self, id: &str, lo: i64, hi: i64) -> Result<BTreeMap<i64, Vec<HandPlayer>>, StoreError> {
        let rows = sqlx::query_as::<_, PlayerColumns>(
            "SELECT hand, player, name, wind, won, points, score, delta, total FROM hand_players \
             WHERE game_id = $1 AND hand >= $2 AND hand <= $3 ORDER BY hand, player",
        )
        .bind(id)
        .bind(lo)
        .bind(hi)
        .fetch_all(self.pool())
        .await?;
        let mut out: BTreeMap<i64, Vec<HandPlayer>> = BTreeMap::new();
        for r in rows {
            out.entry(r.hand).or_default().push(HandPlayer {
                player: r.player,
                name: r.name,
                wind: r.wind,
                won: r.won != 0,
                points: r.points,
                score: r.score.map(|s| json(id, "score", &s)).transpose()?,
                delta: r.delta,
                total: r.total,
            });
        }
        Ok(out)
    }

    /// The payments of hands `lo..=hi`, by hand, in order.
    async fn payments(&self, id: &str, lo: i64, hi: i64) -> Result<BTreeMap<i64, Vec<PaymentRow>>, StoreError> {
        let rows = sqlx::query_as::<_, PaymentColumns>(
            "SELECT hand, from_player, to_player, amount, kind FROM payments \
             WHERE game_id = $1 AND hand >= $2 AND hand <= $3 ORDER BY hand, n",
        )
        .bind(id)
        .bind(lo)
        .bind(hi)
        .fetch_all(self.pool())
        .await?;
        let mut out: BTreeMap<i64, Vec<PaymentRow>> = BTreeMap::new();
        for r in rows {
            out.entry(r.hand).or_default().push(r.payment);
        }
        Ok(out)
    }
}
