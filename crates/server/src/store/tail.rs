//! The tail of SQLite's log: where a table's moves are stored first, and
//! when they are filed into `inputs` and `events`.
//!
//! `inputs` and `events` are clustered by game (migration `0006`), and tables
//! interleave, so each move wrote its rows into its game's own pages of the
//! two tables, and SQLite writes each page a transaction touches whole into
//! its WAL: far more WAL than rows, and as much again copied back by
//! checkpoints. The disk fell behind and the kernel held the writer up
//! (docs/performance.md, "SQLite's log tail").
//!
//! So on SQLite a move's inputs and events are committed to `inputs_tail`
//! and `events_tail` (migration `0008`), keyed by an increasing number: a
//! group's rows land on the last pages of those tables, whatever their
//! games. The journal keeps each game's rows waiting there in memory too
//! ([`Tail`]), and files them into `inputs` and `events` (from memory, in a
//! later group's transaction) when the game's hand ends or its game stops,
//! when its oldest row has waited [`FILE_AFTER`], when a reader asks for the
//! game ([`super::Store::file_tail`]), and when the store closes. A game's
//! pages are then written once for many moves. The front of the tail, once
//! every row in it is filed, is deleted ([`TRUNCATE_EVERY`]).
//!
//! "Stored before shown" holds as before: a batch's rows are committed (in
//! the tail) before its events are sent. A store opening files whatever the
//! tail still holds ([`file_what_is_left`]) before anything reads the log.
//!
//! A batch goes to the tail only when the database could not refuse it
//! anyway: its game's row exists and its rows follow on from the last the
//! journal committed for the game ([`Frontier`]). Any other batch (a game's
//! first, one after a restart, one whose numbers do not follow on) is filed
//! at once, so the database checks it and refuses a bad one as before.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::records::{Batch, EventRow, InputRow};
use crate::store::TableState;

/// A game's rows wait in the tail at most about this long (then they are
/// filed with the next group; longer means fewer writes of each game's
/// pages, and more rows in memory and in the tail).
pub const FILE_AFTER: Duration = Duration::from_secs(10);

/// Games filed in one group for having waited [`FILE_AFTER`] hold at most
/// about this many rows (oldest first, and at least one game), so that no
/// group is much longer than the others: a bound on games instead, whatever
/// their rows, left long write latencies (docs/performance.md, "SQLite's log
/// tail").
const AGED_ROWS_PER_GROUP: usize = 2048;

/// The filed front of the tail is deleted at most this often.
pub const TRUNCATE_EVERY: Duration = Duration::from_secs(1);

/// The journal's memory of the tail: each game's rows waiting there, and
/// where each game's rows stand.
#[derive(Debug)]
pub struct Tail {
    /// The number of the next row appended to the tail.
    next_id: i64,
    /// The games written since the store opened, while they play.
    games: HashMap<String, GameTail>,
    /// Tail rows numbered below this are deleted.
    truncated_below: i64,
    /// When they were last deleted.
    truncated_at: Instant,
}

/// One game's place in the log.
#[derive(Debug)]
struct GameTail {
    /// The last committed rows' numbers.
    frontier: Frontier,
    /// Its rows in the tail, not yet filed.
    waiting: Option<Waiting>,
}

/// The last event sequence number and input number committed for a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Frontier {
    seq: i64,
    n: i64,
}

/// A game's rows in the tail, as they were committed there.
#[derive(Debug)]
struct Waiting {
    /// The number of its first row in the tail.
    first_id: i64,
    /// When that row was committed.
    since: Instant,
    inputs: Vec<InputRow>,
    events: Vec<EventRow>,
}

/// What one group does with its batches' inputs and events.
#[derive(Clone, Debug, Default)]
pub struct Filing {
    /// The games whose rows are filed into `inputs` and `events` in this
    /// group: their rows waiting in the tail, and their batches'.
    filed: HashSet<String>,
    /// For each batch of the group, the number of its first row in the tail
    /// (its inputs, then its events, numbered on), or `None` when its rows
    /// are filed at once.
    tail_ids: Vec<Option<i64>>,
    /// The number of the tail's next row after this group.
    next_id: i64,
    /// Delete the tail's rows numbered below this.
    truncate_below: Option<i64>,
}

impl Filing {
    /// Every batch's rows filed at once (a database without a tail).
    pub fn at_once(batches: usize) -> Filing {
        Filing { tail_ids: vec![None; batches], ..Filing::default() }
    }

    /// The number of the first tail row of batch `i` of the group, or `None`
    /// when its rows are filed.
    pub fn tail_id(&self, i: usize) -> Option<i64> {
        self.tail_ids.get(i).copied().flatten()
    }

    /// The games filed in this group.
    pub fn filed(&self) -> impl Iterator<Item = &str> {
        self.filed.iter().map(String::as_str)
    }

    /// Tail rows numbered below this are deleted in this group.
    pub fn truncate_below(&self) -> Option<i64> {
        self.truncate_below
    }
}

/// What a group is asked to file besides what its batches call for.
#[derive(Clone, Copy, Debug)]
pub enum Ask<'a> {
    /// These games (a reader waits for them).
    Games(&'a [String]),
    /// Every game (the store is closing).
    Everything,
}

impl Tail {
    /// An empty tail (the store files what was left in it when it opens).
    pub fn new() -> Tail {
        Tail { next_id: 1, games: HashMap::new(), truncated_below: 1, truncated_at: Instant::now() }
    }

    /// Games with rows waiting in the tail.
    pub fn games_waiting(&self) -> usize {
        self.games.values().filter(|g| g.waiting.is_some()).count()
    }

    /// A game's rows waiting in the tail (empty when none).
    pub fn waiting(&self, game_id: &str) -> (&[InputRow], &[EventRow]) {
        match self.games.get(game_id).and_then(|g| g.waiting.as_ref()) {
            Some(w) => (&w.inputs, &w.events),
            None => (&[], &[]),
        }
    }

    /// Whether asking for these games files anything.
    pub fn holds_any(&self, ask: Ask<'_>) -> bool {
        match ask {
            Ask::Games(games) => games.iter().any(|g| self.games.get(g).is_some_and(|g| g.waiting.is_some())),
            Ask::Everything => self.games_waiting() > 0,
        }
    }

    /// Decides where the rows of a group's `batches` go.
    pub fn plan(&self, batches: &[&Batch], ask: Ask<'_>, now: Instant) -> Filing {
        let mut filed: HashSet<String> = HashSet::new();
        match ask {
            Ask::Everything => filed.extend(self.games.keys().cloned()),
            Ask::Games(games) => filed.extend(games.iter().cloned()),
        }
        // Where each game's rows will stand as the group's batches go by,
        // for the batches that follow on.
        let mut frontiers: HashMap<&str, Option<Frontier>> = HashMap::new();
        for b in batches {
            let frontier =
                frontiers.entry(b.game_id.as_str()).or_insert_with(|| self.games.get(&b.game_id).map(|g| g.frontier));
            let follows = frontier.is_some_and(|f| follows_on(f, b));
            // A hand's end is filed with its hand's row (which gives the
            // hand's sequence numbers, and whose blocks are copied from the
            // filed rows); a game that stops is filed and forgotten.
            if !follows || !b.hands.is_empty() || b.game.state != TableState::Playing {
                filed.insert(b.game_id.clone());
            }
            *frontier = Some(after(*frontier, b));
        }
        // The games that have waited longest, a few a group.
        let mut aged: Vec<(Instant, &String)> = self
            .games
            .iter()
            .filter_map(|(id, g)| g.waiting.as_ref().map(|w| (w.since, id)))
            .filter(|(since, id)| now.duration_since(*since) >= FILE_AFTER && !filed.contains(*id))
            .collect();
        aged.sort_unstable();
        let mut rows = 0;
        for (_, id) in aged {
            if rows >= AGED_ROWS_PER_GROUP {
                break;
            }
            let (inputs, events) = self.waiting(id);
            rows += inputs.len() + events.len();
            filed.insert(id.clone());
        }

        let mut next_id = self.next_id;
        let tail_ids: Vec<Option<i64>> = batches
            .iter()
            .map(|b| {
                let rows = (b.inputs.len() + b.events.len()) as i64;
                if rows == 0 || filed.contains(&b.game_id) {
                    return None;
                }
                let first = next_id;
                next_id += rows;
                Some(first)
            })
            .collect();
        // The oldest row still waiting after this group: all before it are filed.
        let oldest_waiting = self
            .games
            .iter()
            .filter(|(id, _)| !filed.contains(*id))
            .filter_map(|(_, g)| g.waiting.as_ref().map(|w| w.first_id))
            .chain(tail_ids.iter().flatten().copied())
            .min()
            .unwrap_or(next_id);
        let due = matches!(ask, Ask::Everything) || now.duration_since(self.truncated_at) >= TRUNCATE_EVERY;
        let truncate_below = (due && oldest_waiting > self.truncated_below).then_some(oldest_waiting);
        Filing { filed, tail_ids, next_id, truncate_below }
    }

    /// Takes in a group's `filing` once it is committed: the filed games'
    /// rows are forgotten, the batches' rows put in the tail are kept (taken
    /// out of the batches, which are done with).
    pub fn committed(&mut self, filing: Filing, batches: &mut [&mut Batch], now: Instant) {
        for id in &filing.filed {
            if let Some(g) = self.games.get_mut(id) {
                g.waiting = None;
            }
        }
        for (i, b) in batches.iter_mut().enumerate() {
            let game = self
                .games
                .entry(b.game_id.clone())
                .or_insert(GameTail { frontier: Frontier { seq: 0, n: 0 }, waiting: None });
            game.frontier = after(Some(game.frontier), b);
            if let Some(first_id) = filing.tail_id(i) {
                let w = game.waiting.get_or_insert_with(|| Waiting {
                    first_id,
                    since: now,
                    inputs: Vec::new(),
                    events: Vec::new(),
                });
                w.inputs.append(&mut b.inputs);
                w.events.append(&mut b.events);
            }
        }
        // A game that stopped playing (over, or not yet begun) is forgotten
        // once filed; its next batch, if any, is filed at once.
        for b in batches.iter() {
            if b.game.state != TableState::Playing && self.games.get(&b.game_id).is_some_and(|g| g.waiting.is_none()) {
                self.games.remove(&b.game_id);
            }
        }
        self.next_id = filing.next_id;
        if let Some(below) = filing.truncate_below {
            self.truncated_below = below;
            self.truncated_at = now;
        }
    }
}

impl Default for Tail {
    fn default() -> Tail {
        Tail::new()
    }
}

/// Whether a batch's rows follow on from `frontier`, each numbered above
/// the one before.
fn follows_on(frontier: Frontier, b: &Batch) -> bool {
    let seqs = b.events.iter().map(|e| e.seq);
    let ns = b.inputs.iter().map(|i| i.n);
    increasing(frontier.seq, seqs) && increasing(frontier.n, ns)
}

fn increasing(mut last: i64, numbers: impl Iterator<Item = i64>) -> bool {
    for n in numbers {
        if n <= last {
            return false;
        }
        last = n;
    }
    true
}

/// Where a game's rows stand after batch `b` (from `frontier`, if known).
fn after(frontier: Option<Frontier>, b: &Batch) -> Frontier {
    let f = frontier.unwrap_or(Frontier { seq: 0, n: 0 });
    Frontier {
        seq: b.events.iter().map(|e| e.seq).fold(f.seq, i64::max),
        n: b.inputs.iter().map(|i| i.n).fold(f.n, i64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::event::Audience;
    use crate::store::records::{GameRow, GameSource};

    fn batch(id: &str, seqs: std::ops::RangeInclusive<i64>) -> Batch {
        let row = GameRow {
            name: id.into(),
            preset: String::new(),
            source: GameSource::Live,
            state: TableState::Playing,
            created_us: 0,
            finished_us: None,
            hands: 1,
            scores: [0; 4],
            manager: None,
            last_seq: *seqs.end(),
            rng_pos: 0,
        };
        let mut b = Batch::new(id, row);
        b.events = seqs
            .map(|seq| EventRow { seq, at_us: 0, hand: 1, audience: Audience::Everyone, body: String::new() })
            .collect();
        b
    }

    /// Plans a group of `batches` and takes it in as committed.
    fn commit(tail: &mut Tail, mut batches: Vec<Batch>, ask: Ask<'_>, now: Instant) -> Filing {
        let filing = tail.plan(&batches.iter().collect::<Vec<_>>(), ask, now);
        let kept = filing.clone();
        tail.committed(filing, &mut batches.iter_mut().collect::<Vec<_>>(), now);
        kept
    }

    #[test]
    fn a_game_waits_in_the_tail_until_it_has_waited_long_enough() {
        let start = Instant::now();
        let mut tail = Tail::new();
        // First seen: filed at once.
        let f = commit(&mut tail, vec![batch("a", 1..=2), batch("b", 1..=1)], Ask::Games(&[]), start);
        assert_eq!(f.tail_ids, vec![None, None]);
        // Following on: into the tail, numbered on.
        let f = commit(&mut tail, vec![batch("a", 3..=4), batch("b", 2..=2)], Ask::Games(&[]), start);
        assert_eq!(f.tail_ids, vec![Some(1), Some(3)]);
        assert_eq!(tail.games_waiting(), 2);
        assert_eq!(tail.waiting("a").1.len(), 2);
        // A group a little later files nobody and keeps the front (b's row
        // 3 still waits, so nothing below it may go).
        let soon = start + FILE_AFTER / 2;
        let f = commit(&mut tail, vec![batch("a", 5..=5)], Ask::Games(&[]), soon);
        assert!(f.filed.is_empty());
        assert_eq!(f.tail_ids, vec![Some(4)]);
        assert_eq!(f.truncate_below, None, "nothing filed yet");
        // Once they have waited long enough, any group files them, and the
        // front of the tail goes.
        let late = start + FILE_AFTER;
        let f = commit(&mut tail, Vec::new(), Ask::Games(&[]), late);
        assert_eq!(f.filed.len(), 2);
        assert_eq!(f.truncate_below, Some(5), "every row up to the last is filed");
        assert_eq!(tail.games_waiting(), 0);
        assert!(!tail.holds_any(Ask::Everything));
    }

    #[test]
    fn a_reader_a_hand_end_a_game_over_and_a_gap_file_at_once() {
        let now = Instant::now();
        let mut tail = Tail::new();
        commit(&mut tail, vec![batch("a", 1..=1), batch("b", 1..=1), batch("c", 1..=1)], Ask::Games(&[]), now);
        commit(&mut tail, vec![batch("a", 2..=2), batch("b", 2..=2), batch("c", 2..=2)], Ask::Games(&[]), now);
        assert_eq!(tail.games_waiting(), 3);
        // A reader asks for a.
        let asked = ["a".to_string()];
        assert!(tail.holds_any(Ask::Games(&asked)));
        let f = commit(&mut tail, Vec::new(), Ask::Games(&asked), now);
        assert_eq!(f.filed.iter().collect::<Vec<_>>(), vec!["a"]);
        // b's hand ends; c's game is over.
        let mut ends = batch("b", 3..=3);
        ends.hands.push(crate::store::records::HandRow {
            hand: 1,
            round: String::new(),
            east: 0,
            outcome: crate::store::HandOutcome::WashedOut,
            winners: Vec::new(),
            how: None,
            discarder: None,
            dice: None,
            first_seq: 1,
            last_seq: 3,
            started_us: 0,
            ended_us: 0,
            settlement: None,
            players: Vec::new(),
            payments: Vec::new(),
        });
        let mut over = batch("c", 3..=3);
        over.game.state = TableState::Over;
        let f = commit(&mut tail, vec![ends, over], Ask::Games(&[]), now);
        assert_eq!(f.tail_ids, vec![None, None]);
        assert_eq!(f.filed.len(), 2);
        // c is forgotten: a later batch of it is filed at once.
        let f = commit(&mut tail, vec![batch("c", 4..=4)], Ask::Games(&[]), now);
        assert_eq!(f.tail_ids, vec![None]);
        // A batch that does not follow on is filed at once (and so checked).
        let f = commit(&mut tail, vec![batch("a", 2..=3)], Ask::Games(&[]), now);
        assert_eq!(f.tail_ids, vec![None]);
        // Closing files every game.
        commit(&mut tail, vec![batch("a", 4..=4), batch("b", 4..=4)], Ask::Games(&[]), now);
        assert_eq!(tail.games_waiting(), 2);
        let f = commit(&mut tail, Vec::new(), Ask::Everything, now);
        assert!(f.truncate_below.is_some());
        assert_eq!(tail.games_waiting(), 0);
    }
}
