//! Who sits at a table: people (known by the hash of their seat token) and
//! robots, the game manager, who is connected, who has said `ready`, and
//! who a robot stands in for.

use std::time::Duration;

use tokio::time::Instant;

use super::{SeatGrant, TableError};
use crate::bots::Robot;
use crate::bots::strategy::Strategy;
use crate::protocol::ws::SeatInfo;
use crate::rules::options::GameOptions;
use crate::store::{Revoked, SeatChange, SeatRow, new_seat_token, token_sha256};

/// Who sits in a seat.
#[derive(Debug)]
pub struct Seat {
    /// The name shown.
    pub name: String,
    /// The SHA-256 of a person's seat token (hex); `None` for a robot, and
    /// for an account's seat whose token ended with the account's sessions
    /// (it is played with a new session). The token itself is never kept.
    pub token_sha256: Option<String>,
    /// The account the seat belongs to (`None`: a guest or a robot).
    pub account: Option<i64>,
    /// The account's session the seat was taken with (the SHA-256 of its
    /// token), while the table is up: the seat token ends with it. Not
    /// stored: after a restart, any end of the account's sessions ends it.
    pub session: Option<String>,
    /// The seat counted against its holder's quota, while the game is not over.
    pub hold: Option<crate::limits::Permit>,
    /// A robot's strategy, and the robot playing.
    pub robot: Option<(Strategy, Robot)>,
    /// The connection acting for a person, if connected.
    pub connection: Option<u64>,
    /// When the person's connection was lost.
    pub disconnected_at: Option<Instant>,
    /// Said `ready` (robots always are).
    pub ready: bool,
    /// The pause between actions this player asked for, in deciseconds.
    pub pause_request: u32,
    /// Penalties recorded against the player for leaving (`--disconnect-penalties`).
    pub penalty: i64,
    /// The person wants to be asked about every discard, even one it can
    /// only pass on (`set_claim_prompts`); otherwise the table passes for it.
    pub ask_every_discard: bool,
}

impl Seat {
    /// True for a robot's seat.
    pub fn is_robot(&self) -> bool {
        self.robot.is_some()
    }

    fn person(name: String, token_sha256: String) -> Seat {
        Seat {
            name,
            token_sha256: Some(token_sha256),
            account: None,
            session: None,
            hold: None,
            robot: None,
            connection: None,
            disconnected_at: None,
            ready: false,
            pause_request: 0,
            penalty: 0,
            ask_every_discard: false,
        }
    }
}

/// The four seats and the game manager.
#[derive(Debug, Default)]
pub struct Seats {
    seats: [Option<Seat>; 4],
    /// The game manager's seat (the first person to sit, unless there is none).
    pub manager: Option<u8>,
}

impl Seats {
    /// Who sits in `seat`, if anyone (and `seat` is 0-3).
    pub fn get(&self, seat: u8) -> Option<&Seat> {
        self.seats.get(seat as usize)?.as_ref()
    }

    /// Who sits in `seat`, to change.
    pub fn get_mut(&mut self, seat: u8) -> Option<&mut Seat> {
        self.seats.get_mut(seat as usize)?.as_mut()
    }

    /// The occupied seats.
    pub fn occupied(&self) -> impl Iterator<Item = (u8, &Seat)> {
        (0..4u8).filter_map(|i| self.get(i).map(|s| (i, s)))
    }

    /// The occupied seats, to change.
    pub fn occupied_mut(&mut self) -> impl Iterator<Item = &mut Seat> {
        self.seats.iter_mut().flatten()
    }

    /// Every seat is taken.
    pub fn full(&self) -> bool {
        self.seats.iter().all(Option::is_some)
    }

    /// Some person (not a robot) sits at the table.
    pub fn any_person(&self) -> bool {
        self.occupied().any(|(_, s)| !s.is_robot())
    }

    /// The seat to take: `wanted` if it is free, else a free one chosen by
    /// `pick` among the free seats in order (given their number).
    pub fn free(&self, wanted: Option<u8>, pick: impl FnOnce(usize) -> usize) -> Result<u8, TableError> {
        match wanted {
            Some(s) if s >= 4 => Err(TableError::NoSuchSeat(s)),
            Some(s) if self.get(s).is_some() => Err(TableError::SeatTaken(s)),
            Some(s) => Ok(s),
            None => {
                let free: Vec<u8> = (0..4u8).filter(|&s| self.get(s).is_none()).collect();
                match free.len() {
                    0 => Err(TableError::Full),
                    n => Ok(free[pick(n).min(n - 1)]),
                }
            }
        }
    }

    /// Seats a person in the free seat `seat`; returns the seat token, which
    /// is handed out once and only its hash kept.
    pub fn seat_person(&mut self, seat: u8, name: String, account: Option<i64>) -> SeatGrant {
        let token = new_seat_token();
        let mut person = Seat::person(name, token_sha256(&token));
        person.account = account;
        self.seats[seat as usize] = Some(person);
        SeatGrant { seat, token }
    }

    /// Ends the seat tokens of the accounts' seats taken with a session that
    /// `revoked` ends (by [`Revoked::ends`], the rule a WebSocket opened with
    /// a session goes by); a seat whose session is not known (taken before a
    /// restart) ends with any end of its account's sessions. Returns the
    /// seats whose token ended. A guest's token is its own and never ends so.
    pub fn end_tokens(&mut self, revoked: &Revoked) -> Vec<u8> {
        let mut ended = Vec::new();
        for (i, slot) in self.seats.iter_mut().enumerate() {
            let Some(s) = slot.as_mut().filter(|s| s.token_sha256.is_some()) else { continue };
            let Some(account) = s.account else { continue };
            let ends = match &s.session {
                Some(session) => revoked.ends(account, session),
                None => matches!(revoked, Revoked::User { user, .. } if *user == account),
            };
            if ends {
                s.token_sha256 = None;
                ended.push(i as u8);
            }
        }
        ended
    }

    /// The seats stop counting against their holders' quotas (the game is over).
    pub fn release_holds(&mut self) {
        for s in self.occupied_mut() {
            s.hold = None;
        }
    }

    /// The seat an account holds.
    pub fn of_account(&self, account: i64) -> Option<u8> {
        self.occupied().find(|(_, s)| s.account == Some(account)).map(|(i, _)| i)
    }

    /// Seats a robot in the free seat `seat`; returns its name.
    pub fn seat_robot(&mut self, seat: u8, strategy: Strategy, options: &GameOptions) -> String {
        let name = format!("Robot {}", seat + 1);
        let mut s = Seat::person(name.clone(), String::new());
        s.token_sha256 = None;
        s.robot = Some((strategy, Robot::new(strategy, options.clone())));
        s.ready = true;
        self.seats[seat as usize] = Some(s);
        name
    }

    /// Seats someone as stored (a table rebuilt from the store).
    pub fn restore(&mut self, seat: u8, who: Seat) {
        if let Some(slot) = self.seats.get_mut(seat as usize) {
            *slot = Some(who);
        }
    }

    /// Empties a seat; returns who sat there.
    pub fn vacate(&mut self, seat: u8) -> Option<Seat> {
        self.seats.get_mut(seat as usize)?.take()
    }

    /// The seat whose token this is.
    pub fn of_token(&self, token: &str) -> Option<u8> {
        let hash = token_sha256(token);
        self.occupied().find(|(_, s)| s.token_sha256.as_deref() == Some(&hash)).map(|(i, _)| i)
    }

    /// The first seat a person sits in (the next manager when one leaves).
    pub fn first_person(&self) -> Option<u8> {
        self.occupied().find(|(_, s)| !s.is_robot()).map(|(i, _)| i)
    }

    /// A seat as the store keeps it (or that it is free).
    pub fn row(&self, seat: u8) -> SeatChange {
        match self.get(seat) {
            Some(s) => SeatChange::Set(SeatRow {
                seat: i64::from(seat),
                name: s.name.clone(),
                robot: s.robot.as_ref().map(|(strategy, _)| serde_json::to_string(strategy).unwrap_or_default()),
                token_sha256: s.token_sha256.clone(),
                user_id: s.account,
                pause_request: i64::from(s.pause_request),
                penalty: s.penalty,
            }),
            None => SeatChange::Free(i64::from(seat)),
        }
    }

    /// The seats as everyone may see them.
    pub fn info(&self) -> Vec<SeatInfo> {
        (0..4u8)
            .map(|i| match self.get(i) {
                Some(s) => SeatInfo {
                    seat: i,
                    name: Some(s.name.clone()),
                    robot: s.robot.as_ref().map(|(st, _)| *st),
                    connected: s.is_robot() || s.connection.is_some(),
                    ready: s.is_robot() || s.ready,
                    account: s.account.is_some(),
                },
                None => SeatInfo { seat: i, name: None, robot: None, connected: false, ready: false, account: false },
            })
            .collect()
    }

    /// The names by seat ("" for an empty seat).
    pub fn names(&self) -> [String; 4] {
        std::array::from_fn(|i| self.get(i as u8).map(|s| s.name.clone()).unwrap_or_default())
    }

    /// The longest pause between actions a player asked for.
    pub fn pause_requested(&self) -> u32 {
        self.occupied().map(|(_, s)| s.pause_request).max().unwrap_or(0)
    }

    /// Gives every robot the options in force (after an option change, and
    /// after a rebuild).
    pub fn brief_robots(&mut self, options: &GameOptions) {
        for (strategy, robot) in self.occupied_mut().filter_map(|s| s.robot.as_mut()) {
            *robot = Robot::new(*strategy, options.clone());
        }
    }

    /// A robot makes this seat's moves: a robot's seat, or a person's seat
    /// whose player has been away longer than `takeover`.
    pub fn robot_plays(&self, seat: u8, takeover: Option<Duration>) -> bool {
        let Some(s) = self.get(seat) else { return false };
        s.is_robot()
            || (s.connection.is_none()
                && takeover.is_some_and(|d| s.disconnected_at.is_some_and(|at| at.elapsed() >= d)))
    }

    /// The seats whose `ready` the table waits for (a robot standing in for
    /// an absent player is ready).
    pub fn unready(&self, takeover: Option<Duration>) -> Vec<u8> {
        self.occupied().filter(|&(i, s)| !s.ready && !self.robot_plays(i, takeover)).map(|(i, _)| i).collect()
    }

    /// Everybody must say `ready` again (robots always are).
    pub fn ask_ready(&mut self) {
        for s in self.occupied_mut() {
            s.ready = s.is_robot();
        }
    }

    /// When the first absent player's seat will be taken over by a robot.
    pub fn next_takeover(&self, takeover: Option<Duration>) -> Option<Instant> {
        let delay = takeover?;
        self.occupied()
            .filter(|(_, s)| s.connection.is_none() && !s.is_robot())
            .filter_map(|(_, s)| s.disconnected_at.map(|at| at + delay))
            .filter(|&at| at > Instant::now())
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_are_taken_once_and_known_by_their_token_alone() {
        let mut seats = Seats::default();
        assert_eq!(seats.free(Some(4), |_| 0), Err(TableError::NoSuchSeat(4)));
        let grant = seats.seat_person(2, "Ann".into(), None);
        assert_eq!(seats.free(Some(2), |_| 0), Err(TableError::SeatTaken(2)));
        assert_eq!(seats.free(None, |_| 0), Ok(0), "the lowest free seat");
        assert_eq!(seats.free(None, |n| n - 1), Ok(3), "or the one chosen");
        assert_eq!(seats.of_token(&grant.token), Some(2));
        assert_eq!(seats.of_token("not a token"), None);
        assert_ne!(seats.get(2).unwrap().token_sha256.as_deref(), Some(grant.token.as_str()), "only the hash");
        for s in [0, 1, 3] {
            seats.seat_robot(s, Strategy::default(), &GameOptions::default());
        }
        assert!(seats.full());
        assert_eq!(seats.free(None, |_| 0), Err(TableError::Full));
        assert_eq!(seats.first_person(), Some(2));
        assert_eq!(seats.names()[1], "Robot 2");
    }

    #[test]
    fn an_accounts_seat_tokens_end_with_its_sessions() {
        let mut seats = Seats::default();
        seats.seat_person(0, "Ann".into(), Some(1));
        seats.get_mut(0).unwrap().session = Some("phone".into());
        seats.seat_person(1, "Bob".into(), Some(2));
        seats.seat_person(2, "Guest".into(), None);
        let logout = |sha: &str| Revoked::Session(sha.into());
        let all_but = |user: i64, except: Option<&str>| Revoked::User { user, except: except.map(str::to_string) };
        assert!(seats.end_tokens(&logout("laptop")).is_empty(), "another session's logout");
        assert!(seats.end_tokens(&all_but(1, Some("phone"))).is_empty(), "a password change made on the phone");
        assert_eq!(seats.end_tokens(&logout("phone")), [0]);
        assert_eq!(seats.get(0).unwrap().token_sha256, None);
        assert_eq!(seats.of_account(1), Some(0), "the seat stays the account's");
        assert_eq!(seats.end_tokens(&all_but(2, None)), [1], "a session not known (after a restart) ends with any");
        assert!(seats.end_tokens(&all_but(2, Some("x"))).is_empty(), "ended already");
        assert!(seats.get(2).unwrap().token_sha256.is_some(), "a guest's token is its own");
    }

    #[tokio::test(start_paused = true)]
    async fn an_absent_player_is_stood_in_for_after_the_takeover_delay() {
        let mut seats = Seats::default();
        seats.seat_person(0, "Ann".into(), None);
        seats.seat_robot(1, Strategy::default(), &GameOptions::default());
        seats.ask_ready();
        let takeover = Some(Duration::from_secs(30));
        assert_eq!(seats.unready(takeover), [0], "robots are always ready");
        seats.get_mut(0).unwrap().disconnected_at = Some(Instant::now());
        assert_eq!(seats.next_takeover(takeover), Some(Instant::now() + Duration::from_secs(30)));
        assert!(!seats.robot_plays(0, takeover));
        tokio::time::advance(Duration::from_secs(30)).await;
        assert!(seats.robot_plays(0, takeover), "a robot stands in");
        assert!(seats.unready(takeover).is_empty(), "and is ready for the absent player");
        assert!(!seats.robot_plays(0, None), "without a takeover delay the seat waits");
        assert_eq!(seats.unready(None), [0]);
    }
}
