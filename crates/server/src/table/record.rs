//! What a table writes to the store: everything it did since its last write
//! (the inputs the engine accepted, the events with their numbers, seat
//! changes, the rows of the hands that ended), gathered into one batch and
//! written before any of its events is shown.

use crate::rules::event::Event;
use crate::rules::rebuild::Input;
use crate::store::{Batch, EventRow, GameRow, GameSource, HandProjector, HandRow, InputRow, SeatChange};

/// What the table has done since its last write to the store.
#[derive(Debug, Default)]
struct Pending {
    seats: Vec<SeatChange>,
    inputs: Vec<InputRow>,
    events: Vec<EventRow>,
    hands: Vec<HandRow>,
    /// The game row must be written even with nothing else pending.
    game_changed: bool,
}

/// A table's record in the store: what is pending, and what the game row
/// needs that only the record knows.
#[derive(Debug)]
pub struct Record {
    /// Where the game came from.
    pub source: GameSource,
    /// When the table opened (µs since the epoch).
    pub created_us: i64,
    /// When the game ended.
    pub finished_us: Option<i64>,
    /// The table's settings have not been written yet (a new table).
    settings_unwritten: bool,
    /// Inputs written or pending so far.
    inputs: i64,
    /// Turns the game's events into the hands' rows.
    pub projector: HandProjector,
    pending: Pending,
    /// A batch the store could not take for want of the database: written
    /// before anything else once it is back.
    held: Option<Box<Batch>>,
    /// The game row as last written (`None`: not yet, or not known).
    written_row: Option<GameRow>,
    /// The game row of the batch being written.
    writing_row: Option<GameRow>,
}

impl Record {
    /// The record of a new table: its settings and game row are written
    /// with the first batch.
    pub fn new_table(now_us: i64) -> Record {
        Record {
            source: GameSource::Live,
            created_us: now_us,
            finished_us: None,
            settings_unwritten: true,
            inputs: 0,
            projector: HandProjector::new(Default::default()),
            pending: Pending { game_changed: true, ..Pending::default() },
            held: None,
            written_row: None,
            writing_row: None,
        }
    }

    /// The record of a game already stored, with `inputs` inputs.
    pub fn stored(source: GameSource, created_us: i64, finished_us: Option<i64>, inputs: i64) -> Record {
        Record {
            source,
            created_us,
            finished_us,
            settings_unwritten: false,
            inputs,
            projector: HandProjector::new(Default::default()),
            pending: Pending::default(),
            held: None,
            written_row: None,
            writing_row: None,
        }
    }

    /// Records an input the game accepted, at stream position `seq`.
    pub fn input(&mut self, seq: u64, input: Input) {
        self.inputs += 1;
        self.pending.inputs.push(InputRow { n: self.inputs, seq: seq as i64, input });
    }

    /// Follows a game event numbered `seq`: one that ends a hand gives the
    /// hand's row.
    pub fn observe(&mut self, seq: i64, at_us: i64, event: &Event) {
        if let Some(hand) = self.projector.observe(seq, at_us, event) {
            self.pending.hands.push(hand);
        }
    }

    /// Records an event of the stream.
    pub fn event(&mut self, row: EventRow) {
        self.pending.events.push(row);
    }

    /// Records a seat's change.
    pub fn seat(&mut self, change: SeatChange) {
        self.pending.seats.push(change);
    }

    /// True when nothing waits to be written.
    pub fn is_empty(&self) -> bool {
        let p = &self.pending;
        !p.game_changed && p.seats.is_empty() && p.inputs.is_empty() && p.events.is_empty() && p.hands.is_empty()
    }

    /// Everything pending as one batch, with the game row as it now stands
    /// (and the settings, the first time).
    pub fn batch(&mut self, id: &str, game: GameRow, settings: impl FnOnce() -> String) -> Batch {
        let pending = std::mem::take(&mut self.pending);
        let changed = self.written_row.as_ref().is_none_or(|w| !w.same_but_seq(&game));
        self.writing_row = Some(game.clone());
        let mut batch = Batch::new(id, game);
        batch.game_changed = changed || pending.game_changed;
        if self.settings_unwritten {
            batch.settings = Some(settings());
        }
        batch.seats = pending.seats;
        batch.inputs = pending.inputs;
        batch.events = pending.events;
        batch.hands = pending.hands;
        batch
    }

    /// The batch was committed.
    pub fn written(&mut self) {
        self.settings_unwritten = false;
        if let Some(row) = self.writing_row.take() {
            self.written_row = Some(row);
        }
    }

    /// Keeps a batch the store could not take, to write it first when the
    /// store is back.
    pub fn hold(&mut self, batch: Box<Batch>) {
        self.held = Some(batch);
    }

    /// The batch held back, if any, to write now.
    pub fn take_held(&mut self) -> Option<Box<Batch>> {
        self.held.take()
    }

    /// True while a batch waits for the store to come back: the table then
    /// shows nothing new and changes nothing.
    pub fn is_held(&self) -> bool {
        self.held.is_some()
    }
}
