//! Seating and connections: who sits where, who manages the table, the
//! start of the game, and the connections that play the seats (the newest
//! acts for its seat; a seat whose connection is gone waits for its player).

use rand::Rng;
use tokio::time::Instant;

use super::Actor;
use super::phase::{Phase, Play, RobotGame};
use crate::bots::strategy::Strategy;
use crate::limits::{HandsPayer, Permit};
use crate::protocol::ws::{TableEvent, TableState};
use crate::rules::game::Game;
use crate::rules::rebuild::{Input, new_game};
use crate::store::HandProjector;
use crate::table::stream::{Dropped, to_text};
use crate::table::{Asker, Connection, Farewell, SeatGrant, TableError};

impl Actor {
    /// The seat for a newcomer: the one wanted, else a free one (at random
    /// with `--random-seats`, else the lowest), while the game has not started.
    pub(super) fn free_seat(&mut self, wanted: Option<u8>) -> Result<u8, TableError> {
        if self.phase.table_state() != TableState::Open {
            return Err(TableError::NotNow("the game has started: seats can no longer change".into()));
        }
        let random = self.settings.random_seats;
        let rng = &mut self.rng;
        self.seats.free(wanted, |n| if random { rng.gen_range(0..n) } else { 0 })
    }

    pub(super) fn sit(&mut self, name: &str, seat: Option<u8>, account: Option<i64>) -> Result<SeatGrant, TableError> {
        use crate::text;
        let name = text::person_name(name).map_err(|e| TableError::Invalid(e.to_string()))?;
        let key = text::look_alike_key(&name);
        if let Some((other, _)) = self.seats.occupied().find(|(_, s)| text::look_alike_key(&s.name) == key) {
            return Err(TableError::Invalid(format!(
                "the name '{name}' looks like the name of the player in seat {other}: choose another"
            )));
        }
        if let Some(held) = account.and_then(|a| self.seats.of_account(a)) {
            return Err(TableError::Invalid(format!(
                "your account already sits in seat {held}: connect with your session to play it"
            )));
        }
        let s = self.free_seat(seat)?;
        let grant = self.seats.seat_person(s, name.clone(), account);
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatTaken { seat: s, name, robot: None });
        if self.seats.manager.is_none() && !self.settings.no_manager {
            self.seats.manager = Some(s);
            self.broadcast_table(TableEvent::Manager { seat: Some(s) });
        }
        Ok(grant)
    }

    /// Records a seat's new state (or that it is free) for the store.
    pub(super) fn seat_changed(&mut self, seat: u8) {
        self.record.seat(self.seats.row(seat));
    }

    /// The seat of whoever asks: by its seat token (an unknown one is
    /// refused), else by its account.
    pub(super) fn seat_of(&self, asker: &Asker) -> Result<Option<u8>, TableError> {
        if let Some(token) = &asker.token {
            return self.seats.of_token(token).map(Some).ok_or(TableError::BadToken);
        }
        Ok(asker.account.and_then(|a| self.seats.of_account(a)))
    }

    /// Whether `asker` may seat or remove robots and start the game: an
    /// admin; the manager; at a table without a manager (`--no-manager`),
    /// anyone seated; and anyone while no person sits.
    pub(super) fn may_manage(&self, asker: &Asker) -> Result<(), TableError> {
        let seat = self.seat_of(asker)?;
        if asker.admin {
            return Ok(());
        }
        match (self.seats.manager, seat) {
            (Some(m), Some(a)) if m == a => Ok(()),
            (Some(_), _) => Err(TableError::NotManager),
            (None, None) if self.seats.any_person() => {
                Err(TableError::Invalid("give the seat token of a seated player (or log in as one)".into()))
            }
            (None, _) => Ok(()),
        }
    }

    /// Ends the seat tokens given with sessions that ended, and closes the
    /// connections that play those seats (WebSockets and classic ones
    /// alike): what a session gave lives no longer than it.
    pub(super) fn end_seat_tokens(&mut self, revoked: &crate::store::Revoked) {
        for seat in self.seats.end_tokens(revoked) {
            self.seat_changed(seat);
            if let Some(c) = self.seats.get(seat).and_then(|s| s.connection) {
                self.stream.let_go(c, Farewell::SessionEnded);
                self.seat_lost(c, Some(seat), false);
            }
            tracing::info!(table = %self.id, seat, "a seat token ended with its account's sessions");
        }
    }

    pub(super) fn leave(&mut self, asker: &Asker) -> Result<(), TableError> {
        let s = self.seat_of(asker)?.ok_or(TableError::BadToken)?;
        if self.phase.table_state() != TableState::Open {
            return Err(TableError::NotNow("the game has started: a seat can no longer be left".into()));
        }
        if let Some(c) = self.seats.vacate(s).and_then(|x| x.connection) {
            self.stream.let_go(c, Farewell::SeatLeft);
        }
        self.prompts.forget(s);
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatLeft { seat: s });
        if self.seats.manager == Some(s) {
            self.seats.manager = self.seats.first_person();
            self.broadcast_table(TableEvent::Manager { seat: self.seats.manager });
        }
        Ok(())
    }

    pub(super) fn add_robot(&mut self, seat: Option<u8>, strategy: Strategy) -> Result<u8, TableError> {
        strategy.validate().map_err(|e| TableError::Invalid(e.to_string()))?;
        let s = self.free_seat(seat)?;
        let name = self.seats.seat_robot(s, strategy, &self.settings.options);
        self.seat_changed(s);
        self.broadcast_table(TableEvent::SeatTaken { seat: s, name, robot: Some(strategy) });
        Ok(s)
    }

    pub(super) fn remove_robot(&mut self, seat: u8) -> Result<(), TableError> {
        if seat >= 4 {
            return Err(TableError::NoSuchSeat(seat));
        }
        if self.phase.table_state() != TableState::Open {
            return Err(TableError::NotNow("the game has started: seats can no longer change".into()));
        }
        if !self.seats.get(seat).is_some_and(|s| s.is_robot()) {
            return Err(TableError::Invalid(format!("no robot sits in seat {seat}")));
        }
        self.seats.vacate(seat);
        self.seat_changed(seat);
        self.broadcast_table(TableEvent::SeatLeft { seat });
        Ok(())
    }

    /// Starts the game for `asker`; a game of four robots needs the permit
    /// of `robot_game` (its starter's quota), which it holds while it is
    /// played, and its hands after the first are paid for by `payer`.
    pub(super) fn start(
        &mut self,
        asker: &Asker,
        robot_game: Option<Permit>,
        payer: Option<HandsPayer>,
    ) -> Result<(), TableError> {
        self.may_manage(asker)?;
        if self.phase.table_state() == TableState::Open && self.seats.full() && !self.seats.any_person() {
            let Some(permit) = robot_game else {
                return Err(TableError::NotNow(
                    "a game of robots alone was not asked for: ask to start it again".into(),
                ));
            };
            self.begin()?;
            if let Some(play) = self.phase.play_mut() {
                play.robot_game = Some(RobotGame { hold: permit, payer: payer.map(|payer| (payer, 1)) });
            }
            return Ok(());
        }
        self.begin()
    }

    /// A classic table starts by itself, as mj-server's game does, once its
    /// four seats are taken and every person in them is connected (never a
    /// table of robots alone: somebody starts that, and it counts as theirs).
    pub(super) fn start_if_classic_and_full(&mut self) {
        let everyone_here = self.seats.occupied().all(|(_, s)| s.is_robot() || s.connection.is_some());
        if self.settings.classic
            && self.phase.table_state() == TableState::Open
            && self.seats.full()
            && self.seats.any_person()
            && everyone_here
        {
            let _ = self.begin();
        }
    }

    /// Starts the game: the seats are full.
    pub(super) fn begin(&mut self) -> Result<(), TableError> {
        if self.phase.table_state() != TableState::Open {
            return Err(TableError::NotNow("the game has already started".into()));
        }
        if !self.seats.full() {
            return Err(TableError::NotNow(
                "four players are needed: fill the empty seats with people or robots".into(),
            ));
        }
        self.record.input(self.stream.seq(), Input::StartGame);
        let game = new_game(self.settings.options.clone(), self.settings.no_special_scores);
        self.start_following(game);
        // It no longer waits to start: the opener's hold goes with the open phase.
        self.phase = Phase::Playing(Play::new(None, None));
        self.broadcast_table(TableEvent::GameStarted);
        tracing::info!(table = %self.id, name = %self.settings.name, players = ?self.seats.names(), "game started");
        self.await_ready();
        Ok(())
    }

    /// Gives every robot the options in force (the game's, or the table's
    /// before it starts): after an option change, and after a rebuild.
    pub(super) fn brief_robots(&mut self) {
        let options = self.game.as_ref().map_or(&self.settings.options, Game::options);
        self.seats.brief_robots(options);
    }

    /// Takes the game (new, or rebuilt) and follows its hands by the seated names.
    pub(super) fn start_following(&mut self, game: Game) {
        self.game = Some(game);
        self.record.projector = HandProjector::new(self.seats.names());
    }

    pub(super) fn connect(
        &mut self,
        token: Option<&str>,
        account: Option<i64>,
        since: Option<u64>,
        replay_hand: bool,
    ) -> Result<Connection, TableError> {
        let seat = match token {
            Some(t) => Some(self.seats.of_token(t).ok_or(TableError::BadToken)?),
            // A logged-in player needs no token for its own seat.
            None => account.and_then(|a| self.seats.of_account(a)),
        };
        let id = self.stream.next_connection();
        let (connection, needs_snapshot) = self.stream.subscribe(id, seat, since)?;
        // The newest connection acts for the seat; an older one closes.
        let mut arrived = None;
        if let Some(st) = seat.and_then(|s| self.seats.get_mut(s)) {
            // A classic client answers every discard itself, as mj-server's
            // clients do. Otherwise the seat keeps what it asked for
            // (`set_claim_prompts`; at first, only when it can claim).
            if replay_hand {
                st.ask_every_discard = true;
            }
            match st.connection.replace(id) {
                Some(old) => self.stream.let_go(old, Farewell::Replaced),
                None => arrived = Some(st.disconnected_at.take().is_some()),
            }
        }
        // The snapshot is made once the connection counts (its seat
        // connected, or one more spectator).
        if needs_snapshot {
            let snapshot = to_text(&self.snapshot(seat));
            self.stream.send_to(id, snapshot);
            if replay_hand && self.game.as_ref().is_some_and(Game::hand_in_progress) {
                self.stream.replay_hand(id);
            }
        }
        if let Some(s) = seat {
            // A new connection is told what it may do, whatever it was told before.
            self.prompts.forget(s);
            self.send_prompt(s);
            // Everybody sees who is at the table: the first connection of a
            // seat taken by REST counts as much as a return.
            match arrived {
                Some(true) => self.broadcast_table(TableEvent::Reconnected { seat: s }),
                Some(false) => self.broadcast_table(TableEvent::Connected { seat: s }),
                None => {}
            }
        }
        Ok(connection)
    }

    pub(super) fn disconnect(&mut self, connection: u64) {
        let Some(seat) = self.stream.unsubscribe(connection) else { return };
        self.seat_lost(connection, seat, true);
    }

    /// A connection acting for `seat` is gone: closed by the client (`left`;
    /// noticed by its socket, or by the table finding the socket ended), or
    /// dropped by the table as too slow (the client will reconnect, so that
    /// never ends a game under `--end-on-disconnect`).
    pub(super) fn seat_lost(&mut self, connection: u64, seat: Option<u8>, left: bool) {
        let Some(s) = seat else { return };
        let Some(seat_state) = self.seats.get_mut(s) else { return };
        if seat_state.connection == Some(connection) {
            seat_state.connection = None;
            seat_state.disconnected_at = Some(Instant::now());
            self.prompts.forget(s);
            self.broadcast_table(TableEvent::Disconnected { seat: s });
            if left && self.settings.end_on_disconnect && self.phase.table_state() == TableState::Playing {
                self.end_on_disconnect(s);
            }
        }
    }

    /// A subscriber the stream dropped: fell behind, or its socket already
    /// ended (which is the client leaving).
    pub(super) fn forget_dropped(&mut self, dropped: Dropped) {
        self.seat_lost(dropped.connection, dropped.seat, dropped.gone);
    }
}
