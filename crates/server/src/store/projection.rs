//! The hand projection: follows a game's events and, when a hand ends (won
//! and settled, or washed out), produces the rows the score queries read.
//! The same projector serves live tables, recovery and imported games, so a
//! hand is described the same way whichever way it reached the store.

use crate::rules::event::Event;
use crate::rules::tile::Wind;

use super::records::{HandOutcome, HandPlayerRow, HandRow, PaymentRow};

/// Follows one game's events.
#[derive(Clone, Debug)]
pub struct HandProjector {
    names: [String; 4],
    totals: [i64; 4],
    current: Option<Current>,
}

/// What is known of the hand being played.
#[derive(Clone, Debug)]
struct Current {
    hand: i64,
    round: Wind,
    east: u8,
    dice: Option<[u8; 2]>,
    first_seq: i64,
    started_us: i64,
    winners: Vec<i64>,
    how: Option<&'static str>,
    discarder: Option<i64>,
    /// The last player to discard or declare a kong (who supplies a tile taken).
    supplier: Option<i64>,
    scores: [Option<crate::rules::scoring::HandScore>; 4],
}

impl HandProjector {
    /// A projector for a game with these players (by player id).
    pub fn new(names: [String; 4]) -> HandProjector {
        HandProjector { names, totals: [0; 4], current: None }
    }

    /// The cumulative scores so far, by player id.
    pub fn totals(&self) -> [i64; 4] {
        self.totals
    }

    /// Sets the cumulative scores (when following a game from the middle).
    pub fn set_totals(&mut self, totals: [i64; 4]) {
        self.totals = totals;
    }

    /// Follows one event (with its sequence number and time); returns the
    /// finished hand when the event ends one.
    pub fn observe(&mut self, seq: i64, at_us: i64, event: &Event) -> Option<HandRow> {
        match event {
            Event::HandStarted { hand, east, round, dice, .. } => {
                self.current = Some(Current {
                    hand: i64::from(*hand),
                    round: *round,
                    east: east.0,
                    dice: *dice,
                    first_seq: seq,
                    started_us: at_us,
                    winners: Vec::new(),
                    how: None,
                    discarder: None,
                    supplier: None,
                    scores: Default::default(),
                });
                None
            }
            _ => {
                let current = self.current.as_mut()?;
                match event {
                    Event::Discarded { player, .. }
                    | Event::DeclaredClosedKong { player, .. }
                    | Event::AddedToPung { player, .. } => current.supplier = Some(i64::from(player.0)),
                    Event::MahJong { player, tile } => {
                        current.winners.push(i64::from(player.0));
                        if current.how.is_none() {
                            current.how = Some(if tile.is_some() { "self_drawn" } else { "discard" });
                            current.discarder = if tile.is_some() { None } else { current.supplier };
                        }
                    }
                    Event::RobbedKong { player, .. } => {
                        current.winners.push(i64::from(player.0));
                        current.how = Some("robbed_kong");
                        current.discarder = current.supplier;
                    }
                    Event::HandScored { player, score } => {
                        current.scores[player.index()] = Some(score.clone());
                    }
                    Event::Settled { settlement, deltas, scores } => {
                        self.totals = *scores;
                        let settlement_json = serde_json::to_string(settlement).unwrap_or_default();
                        let current = self.current.take()?;
                        let payments = settlement
                            .payments
                            .iter()
                            .map(|p| PaymentRow {
                                from_player: current.player_at(p.from),
                                to_player: current.player_at(p.to),
                                amount: p.amount,
                                kind: serde_json::to_value(p.kind)
                                    .ok()
                                    .and_then(|v| v.as_str().map(str::to_string))
                                    .unwrap_or_default(),
                            })
                            .collect();
                        return Some(self.row(
                            current,
                            HandOutcome::Won,
                            seq,
                            at_us,
                            *deltas,
                            Some(settlement_json),
                            payments,
                        ));
                    }
                    Event::WashedOut { .. } => {
                        let current = self.current.take()?;
                        return Some(self.row(current, HandOutcome::WashedOut, seq, at_us, [0; 4], None, Vec::new()));
                    }
                    _ => {}
                }
                None
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn row(
        &self,
        current: Current,
        outcome: HandOutcome,
        last_seq: i64,
        ended_us: i64,
        deltas: [i64; 4],
        settlement: Option<String>,
        payments: Vec<PaymentRow>,
    ) -> HandRow {
        let players = (0..4usize)
            .map(|p| {
                let score = current.scores[p].as_ref();
                HandPlayerRow {
                    player: p as i64,
                    name: self.names[p].clone(),
                    wind: format!("{:?}", current.wind_of(p)),
                    won: current.winners.contains(&(p as i64)),
                    points: score.map_or(0, |s| s.score),
                    score: score.and_then(|s| serde_json::to_string(s).ok()),
                    delta: deltas[p],
                    total: self.totals[p],
                }
            })
            .collect();
        HandRow {
            hand: current.hand,
            round: format!("{:?}", current.round),
            east: i64::from(current.east),
            outcome,
            winners: current.winners,
            how: current.how.map(str::to_string),
            discarder: current.discarder,
            dice: current.dice,
            first_seq: current.first_seq,
            last_seq,
            started_us: current.started_us,
            ended_us,
            settlement,
            players,
            payments,
        }
    }
}

impl Current {
    fn player_at(&self, seat: Wind) -> i64 {
        ((usize::from(self.east) + seat.index()) % 4) as i64
    }

    fn wind_of(&self, player: usize) -> Wind {
        Wind::from_index(player + 4 - usize::from(self.east))
    }
}
