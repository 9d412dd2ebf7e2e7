//! The table's stream as mj-server's controller messages: what one classic
//! player is told. The table's events already say who may see what (a draw
//! reaches the others with its tile hidden), so printing is a matter of
//! names and numbers: seats become player ids, and the table's handshakes
//! (ready, pauses) become mj-server's `Pause`/`PlayerReady`.

use crate::protocol::classic::{ControllerMessage, GameOptionEntry};
use crate::protocol::ws::{StreamEvent, TableEvent};
use crate::rules::command::Claim;
use crate::rules::event::Event;
use crate::rules::options::{GameOptions, OptionSpec, OptionType, mj_server_catalogue};
use crate::rules::tile::Wind;

/// The protocol version this server speaks (mj-server 1.12's).
pub const PROTOCOL_VERSION: i32 = 1110;

/// What the printer remembers of its table between events.
#[derive(Clone, Debug)]
pub struct Printer {
    /// The player id of seat 0, less one: seat `s` is player `base + s + 1`.
    base: i32,
    /// The seat this printer prints for.
    me: u8,
    /// Seats the table waits for (after a `Pause`), to say who became ready.
    unready: Vec<u8>,
    /// A `Pause` is under way: `WaitingForReady` lists who is left.
    pausing: bool,
    /// The next `WaitingForReady` asks to start the first hand.
    first_hand: bool,
    /// This hand's East.
    east: u8,
    /// A chow of this player's was granted without a position: its next
    /// `Chow` says where the tile goes.
    chow_pending: bool,
    /// Counts the pauses printed, so that a player's `Ready` answers one
    /// pause once.
    pauses: u64,
    /// The player was told the game (`Game`): from then on a change of
    /// manager is told (before, `Game` names the manager).
    announced: bool,
}

impl Printer {
    /// A printer for seat `me` at a table whose seat 0 is player `base + 1`.
    pub fn new(base: i32, me: u8) -> Printer {
        Printer {
            base,
            me,
            unready: Vec::new(),
            pausing: false,
            first_hand: true,
            east: 0,
            chow_pending: false,
            pauses: 0,
            announced: false,
        }
    }

    /// The player id of a seat.
    pub fn id(&self, seat: u8) -> i32 {
        self.base + i32::from(seat) + 1
    }

    /// The pause the table waits for this player's `Ready` in, if any (its
    /// number: a `Ready` answers it once).
    pub fn awaited_ready(&self) -> Option<u64> {
        (self.pausing && self.unready.contains(&self.me)).then_some(self.pauses)
    }

    /// This player must say where its claimed tile goes in a chow.
    pub fn chow_position_pending(&self) -> bool {
        self.chow_pending
    }

    /// The player has been told the game (`Game`, at its start or on a
    /// reconnection).
    pub fn game_announced(&mut self) {
        self.announced = true;
    }

    /// The hand being played has this East (after a reconnection).
    pub fn set_east(&mut self, east: u8) {
        self.east = east;
        self.first_hand = false;
    }

    /// The messages one event of the stream becomes for this player.
    pub fn event(&mut self, event: &StreamEvent) -> Vec<ControllerMessage> {
        match event {
            StreamEvent::Game(e) => self.game_event(e),
            StreamEvent::Table(e) => self.table_event(e),
        }
    }

    fn table_event(&mut self, event: &TableEvent) -> Vec<ControllerMessage> {
        use ControllerMessage as C;
        match event {
            TableEvent::SeatTaken { seat, name, .. } if *seat != self.me => {
                vec![C::Player { id: self.id(*seat), name: name.clone() }]
            }
            TableEvent::SeatLeft { seat } if *seat != self.me => {
                vec![C::Player { id: self.id(*seat), name: String::new() }]
            }
            // Before the game the `Game` message names the manager.
            TableEvent::Manager { seat } if self.announced => {
                vec![C::ChangeManager { id: 0, manager: seat.map_or(0, |s| self.id(s)) }]
            }
            TableEvent::WaitingForReady { seats } => {
                let mut out = Vec::new();
                if !self.pausing {
                    // Between hands: mj-server's pause before a hand.
                    let reason =
                        if std::mem::take(&mut self.first_hand) { "to start hand" } else { "to start next hand" };
                    out.push(C::Pause { exempt: 0, requestor: 0, reason: reason.into() });
                    if reason == "to start hand" {
                        out.push(C::StartPlay { id: 0 });
                    }
                    self.pausing = true;
                    self.pauses += 1;
                    self.unready = vec![0, 1, 2, 3];
                }
                // Everybody no longer waited for is ready (robots always are).
                for seat in std::mem::take(&mut self.unready) {
                    if !seats.contains(&seat) {
                        out.push(C::PlayerReady { id: self.id(seat) });
                    }
                }
                self.unready = seats.clone();
                out
            }
            TableEvent::Paused { seat, reason } => {
                self.pausing = true;
                self.pauses += 1;
                self.unready = vec![0, 1, 2, 3];
                vec![C::Pause { exempt: 0, requestor: self.id(*seat), reason: reason.clone() }]
            }
            TableEvent::PlayStarting { east } => {
                self.pausing = true;
                self.pauses += 1;
                self.unready = (0..4).filter(|s| s != east).collect();
                vec![C::Pause { exempt: self.id(*east), requestor: 0, reason: "to start play".into() }]
            }
            TableEvent::Resumed => self.all_ready(),
            TableEvent::OptionChanged { name, value } => match option_entry_named(name, value) {
                Some(optentry) => vec![C::GameOption { id: 0, optentry }],
                None => Vec::new(),
            },
            TableEvent::Chat { seat, text, .. } => {
                vec![C::Message { sender: self.id(*seat), addressee: 0, text: text.clone() }]
            }
            TableEvent::Disconnected { seat } if *seat != self.me => {
                vec![C::Message {
                    sender: 0,
                    addressee: 0,
                    text: format!("Player {} has lost its connection", self.id(*seat)),
                }]
            }
            TableEvent::Reconnected { seat } if *seat != self.me => {
                vec![C::Message { sender: 0, addressee: 0, text: format!("Player {} is back", self.id(*seat)) }]
            }
            TableEvent::Closed { reason } => {
                vec![C::Message { sender: 0, addressee: 0, text: format!("The table has closed: {reason}") }]
            }
            _ => Vec::new(),
        }
    }

    fn game_event(&mut self, event: &Event) -> Vec<ControllerMessage> {
        use ControllerMessage as C;
        match event {
            Event::ChowPositionNeeded { player, .. } if player.0 == self.me => self.chow_pending = true,
            Event::Chowed { .. } | Event::HandStarted { .. } | Event::Discarded { .. } => self.chow_pending = false,
            _ => {}
        }
        let base = self.base;
        let id = |p: &crate::rules::command::PlayerId| base + i32::from(p.0) + 1;
        vec![match event {
            Event::HandStarted { hand, east, round, new_round, dice, .. } => {
                self.east = east.0;
                self.first_hand = false;
                let (start_wall, start_stack) = deal_start(dice.unwrap_or([1, 1]));
                let mut out = self.all_ready();
                if *new_round && *hand > 1 {
                    out.push(C::NewRound { round: *round });
                }
                out.push(C::NewHand { east: self.id(east.0), start_wall, start_stack });
                return out;
            }
            Event::Drew { player, tile, loose: false, .. } => C::PlayerDraws { id: id(player), tile: *tile },
            Event::Drew { player, tile, loose: true, .. } => C::PlayerDrawsLoose { id: id(player), tile: *tile },
            Event::DeclaredBonus { player, tile } => C::PlayerDeclaresSpecial { id: id(player), tile: Some(*tile) },
            Event::FinishedDeclaring { player } => C::PlayerDeclaresSpecial { id: id(player), tile: None },
            Event::Discarded { player, tile, discard, calling } => {
                C::PlayerDiscards { id: id(player), tile: *tile, discard: serial(*discard), calling: *calling }
            }
            Event::Passed { player, discard, timeout } => {
                C::PlayerDoesntClaim { id: id(player), discard: serial(*discard), timeout: *timeout }
            }
            Event::Claimed { player, discard, claim } => {
                let (id, discard) = (id(player), serial(*discard));
                match claim {
                    Claim::Chow(cpos) => C::PlayerClaimsChow { id, discard, cpos: *cpos },
                    Claim::Pung => C::PlayerClaimsPung { id, discard },
                    Claim::Kong => C::PlayerClaimsKong { id, discard },
                    Claim::MahJong => C::PlayerClaimsMahJong { id, discard },
                }
            }
            Event::ClaimDenied { player, reason } => C::ClaimDenied { id: id(player), reason: reason.clone() },
            Event::ChowPositionNeeded { player, tile } => C::PlayerChows { id: id(player), tile: *tile, cpos: None },
            Event::Chowed { player, tile, position } => {
                C::PlayerChows { id: id(player), tile: *tile, cpos: Some(*position) }
            }
            Event::Punged { player, tile } => C::PlayerPungs { id: id(player), tile: *tile },
            Event::Konged { player, tile } => C::PlayerKongs { id: id(player), tile: *tile },
            Event::Paired { player, tile } => C::PlayerPairs { id: id(player), tile: *tile },
            Event::DeclaredClosedKong { player, tile, discard } => {
                C::PlayerDeclaresClosedKong { id: id(player), tile: *tile, discard: serial(*discard) }
            }
            Event::AddedToPung { player, tile, discard } => {
                C::PlayerAddsToPung { id: id(player), tile: *tile, discard: serial(*discard) }
            }
            Event::RobbedKong { player, tile } => C::PlayerRobsKong { id: id(player), tile: *tile },
            Event::DangerousDiscard { player, discard, no_choice } => {
                C::DangerousDiscard { id: id(player), discard: serial(*discard), nochoice: *no_choice }
            }
            Event::MahJong { player, tile } => C::PlayerMahJongs { id: id(player), tile: *tile },
            Event::DeclaredSpecialSet { player, tiles } => {
                C::PlayerFormsClosedSpecialSet { id: id(player), tiles: tiles.clone() }
            }
            Event::FormedClosedSet { player, set } => {
                let id = id(player);
                let tile = set.tile;
                if set.kind.is_chow() {
                    C::PlayerFormsClosedChow { id, tile }
                } else if set.kind.is_pair() {
                    C::PlayerFormsClosedPair { id, tile }
                } else {
                    C::PlayerFormsClosedPung { id, tile }
                }
            }
            Event::ShowedTiles { player, tiles } => C::PlayerShowsTiles { id: id(player), tiles: tiles.clone() },
            Event::HandScored { player, score } => {
                C::HandScore { id: id(player), score: clamp(score.score), explanation: score.text().to_string() }
            }
            Event::Settled { settlement, .. } => {
                let d = settlement.deltas.map(clamp);
                // mj-server ends each payer's block, the last too, with an empty line.
                let mut explanation = settlement.lines.join("\n");
                explanation.push_str("\n\n");
                C::Settlement { east: d[0], south: d[1], west: d[2], north: d[3], explanation }
            }
            Event::WashedOut { reason } => C::WashOut { reason: reason.clone() },
            Event::GameOver { .. } => {
                // mj-server ends with a pause for a next hand that never comes.
                return vec![C::GameOver, C::Pause { exempt: 0, requestor: 0, reason: "to start next hand".into() }];
            }
            // East's tile swap has no classic messages: classic clients do
            // not sit at tables that play it.
            Event::PlayStarted { .. }
            | Event::SwapStarted { .. }
            | Event::SwapChosen { .. }
            | Event::TilePassed { .. }
            | Event::LotPassed { .. }
            | Event::TileReceived { .. } => return Vec::new(),
        }]
    }

    /// The pause is over: whoever was still waited for became ready (the
    /// table says so only by going on).
    fn all_ready(&mut self) -> Vec<ControllerMessage> {
        if !std::mem::take(&mut self.pausing) {
            return Vec::new();
        }
        std::mem::take(&mut self.unready)
            .into_iter()
            .map(|s| ControllerMessage::PlayerReady { id: self.id(s) })
            .collect()
    }

    /// The `Game` message: the seating by player id for the hand now (or
    /// the first), the round and the scores by seat.
    pub fn game_message(&self, round: Wind, scores: [i64; 4], manager: Option<u8>) -> ControllerMessage {
        let seat_id = |wind: u8| self.id((self.east + wind) % 4);
        let score = |wind: u8| clamp(scores[usize::from((self.east + wind) % 4)]);
        ControllerMessage::Game {
            east: seat_id(0),
            south: seat_id(1),
            west: seat_id(2),
            north: seat_id(3),
            round,
            hands_as_east: 0,
            firsteast: self.id(0),
            east_score: score(0),
            south_score: score(1),
            west_score: score(2),
            north_score: score(3),
            protversion: PROTOCOL_VERSION,
            manager: manager.map_or(0, |s| self.id(s)),
        }
    }
}

/// The whole option list as mj-server sends it: each of mj-server's
/// options with its value, then the pseudo-option `End`.
pub fn option_list(options: &GameOptions) -> Vec<ControllerMessage> {
    let mut out: Vec<ControllerMessage> = mj_server_catalogue()
        .iter()
        .filter_map(|spec| {
            let value = options.get(spec.name).ok()?.raw();
            option_entry_named(spec.name, &value)
        })
        .map(|optentry| ControllerMessage::GameOption { id: 0, optentry })
        .collect();
    out.push(ControllerMessage::GameOption { id: 0, optentry: end_entry() });
    out
}

/// One option's entry, if the option is one of mj-server's.
pub fn option_entry_named(name: &str, value: &str) -> Option<GameOptionEntry> {
    let spec = mj_server_catalogue().iter().find(|s| s.name == name)?;
    Some(option_entry(spec, value))
}

/// An option's entry with this value, as a `GameOption` message carries it.
pub fn option_entry(spec: &OptionSpec, value: &str) -> GameOptionEntry {
    GameOptionEntry {
        name: spec.name.into(),
        option_type: spec.kind.word().into(),
        protversion: i32::try_from(spec.min_protocol).unwrap_or(0),
        enabled: true,
        value: value.into(),
        desc: spec.description.into(),
    }
}

/// The pseudo-option `End` that closes an option list.
pub fn end_entry() -> GameOptionEntry {
    GameOptionEntry {
        name: "End".into(),
        option_type: OptionType::Bool.word().into(),
        protversion: 0,
        enabled: true,
        value: "1".into(),
        desc: "end of option list".into(),
    }
}

/// Where the live wall notionally starts, from the hand's dice, as mj-server
/// works it out from its own four dice (it has no effect on play): the wall
/// by the sum of the dice, the stack by the sum again from there.
fn deal_start(dice: [u8; 2]) -> (i32, i32) {
    let sum = i32::from(dice[0]) + i32::from(dice[1]);
    let mut wall = sum;
    let mut stack = wall + sum + 1;
    if stack > 18 {
        stack -= 18;
        wall += 1;
    }
    ((wall - 1) % 4, stack)
}

fn serial(discard: u32) -> i32 {
    i32::try_from(discard).unwrap_or(i32::MAX)
}

/// Scores are bounded by the rules far below 32 bits; clamped all the same.
fn clamp(value: i64) -> i32 {
    value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}
