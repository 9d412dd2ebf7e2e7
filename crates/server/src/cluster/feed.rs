//! The spectators of a table another node plays, at this node: one feed.
//!
//! A table's spectators all see the same thing (the table cuts its stream for
//! "a spectator" once), so the owner relays it to this node once, however many
//! spectators are here: one relayed spectator connection, the feed, whose
//! messages this node hands to each spectator's socket (a *tap*). A seat's
//! stream stays its own (see `relay`): what a player may see is cut by the
//! owner's table and by nothing else.
//!
//! Each spectator still starts from the owner's table: its snapshot, or the
//! events it missed after `since` (a *glimpse*, answered to its own connect and
//! not relayed), which end at some event number. It then takes the feed's
//! events after that number: from the feed's recent events when the feed is
//! ahead, or as they come when it is behind. A spectator the recent events no
//! longer cover gets a stream of its own instead.
//!
//! Each tap has its own bounded queue: a slow socket is let go as fallen
//! behind (4000), never the feed. The feed's end (the table moved or closed)
//! ends every tap with the same farewell.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::table::{Connection, Farewell};

/// The feed's events kept for a spectator that joins behind it: more than a
/// hand's worth of a robots' table between a glimpse and the join.
const RECENT: usize = 1024;

/// One table's spectators at this node and the events they share.
#[derive(Debug)]
pub struct Feed {
    state: Mutex<State>,
    /// The number of taps, for the owner's count of spectators.
    watchers: watch::Sender<usize>,
    /// Cancelled when the feed is no longer wanted (its last tap left).
    pub unwanted: CancellationToken,
    queue: usize,
}

#[derive(Debug)]
struct State {
    /// Events after this number are all in `recent` or still to come.
    covered_after: u64,
    /// The last event the feed gave (its taps' events come after it).
    last: u64,
    recent: VecDeque<(u64, Arc<str>)>,
    taps: HashMap<u64, Tap>,
    /// The feed has ended: nobody joins it any more.
    ended: bool,
}

impl State {
    /// Sends a spectator's `glimpse` (which brings it to event `at`), then
    /// the kept events after `at`; the last event it then has. `None` when
    /// the events after `at` are no longer all kept, or do not fit in its
    /// queue.
    fn catch_up(&self, sender: &mpsc::Sender<Arc<str>>, glimpse: &[Arc<str>], at: u64) -> Option<u64> {
        if at < self.covered_after {
            return None;
        }
        let missed = self.recent.iter().filter(|(seq, _)| *seq > at).map(|(_, text)| text);
        for text in glimpse.iter().chain(missed) {
            sender.try_send(text.clone()).ok()?;
        }
        Some(at.max(self.last))
    }
}

#[derive(Debug)]
struct Tap {
    sender: mpsc::Sender<Arc<str>>,
    farewell: Arc<OnceLock<Farewell>>,
    /// The last event this spectator has.
    last: u64,
}

impl Feed {
    /// A feed whose events start after event `after`; each tap may queue
    /// `queue` messages.
    pub fn new(after: u64, queue: usize) -> Arc<Feed> {
        let state =
            State { covered_after: after, last: after, recent: VecDeque::new(), taps: HashMap::new(), ended: false };
        Arc::new(Feed {
            state: Mutex::new(state),
            watchers: watch::channel(0).0,
            unwanted: CancellationToken::new(),
            queue: queue.max(16),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The last event the feed gave (where a feed attached again resumes).
    pub fn last(&self) -> u64 {
        self.state().last
    }

    /// Whether the feed has ended.
    pub fn has_ended(&self) -> bool {
        self.state().ended
    }

    /// The number of spectators it feeds, as it changes.
    pub fn watchers(&self) -> watch::Receiver<usize> {
        self.watchers.subscribe()
    }

    /// A spectator joins as socket `id`: its glimpse first, which brings it
    /// to event `at`, then the feed's events after `at`. `None`, and nothing
    /// joined, when the feed has ended or no longer has every event after
    /// `at`.
    pub fn join(&self, id: u64, glimpse: &[Arc<str>], at: u64) -> Option<Connection> {
        let mut state = self.state();
        if state.ended || glimpse.len() >= self.queue {
            return None;
        }
        let (sender, outbound) = mpsc::channel(self.queue);
        let last = state.catch_up(&sender, glimpse, at)?;
        let farewell: Arc<OnceLock<Farewell>> = Arc::default();
        state.taps.insert(id, Tap { sender, farewell: farewell.clone(), last });
        self.watchers.send_replace(state.taps.len());
        Some(Connection { id, seat: None, outbound, farewell })
    }

    /// Whether socket `id` is one of the feed's spectators.
    pub fn feeds(&self, id: u64) -> bool {
        self.state().taps.contains_key(&id)
    }

    /// Socket `id` closed.
    pub fn leave(&self, id: u64) {
        let mut state = self.state();
        if state.taps.remove(&id).is_some() {
            self.left(&mut state);
        }
    }

    /// Lets spectator `id` go for `why`: its socket closes saying so.
    pub fn let_go(&self, id: u64, why: Farewell) {
        let mut state = self.state();
        if let Some(tap) = state.taps.remove(&id) {
            let _ = tap.farewell.set(why);
            self.left(&mut state);
        }
    }

    /// After taps were let go: the owner is told the new count, and a feed
    /// nobody watches ends (a spectator who comes later starts a new one).
    fn left(&self, state: &mut State) {
        self.watchers.send_replace(state.taps.len());
        if state.taps.is_empty() {
            state.ended = true;
            self.unwanted.cancel();
        }
    }

    /// Sends one message to one spectator (an answer to it alone). A full
    /// queue lets it go as fallen behind.
    pub fn tell(&self, id: u64, text: Arc<str>) {
        let mut state = self.state();
        let Some(tap) = state.taps.get(&id) else { return };
        if let Err(e) = tap.sender.try_send(text) {
            if matches!(e, mpsc::error::TrySendError::Full(_)) {
                let _ = tap.farewell.set(Farewell::FellBehind);
            }
            state.taps.remove(&id);
            self.left(&mut state);
        }
    }

    /// A spectator asked for a snapshot: what it has so far is replaced by
    /// `glimpse` (a fresh snapshot, to event `at`), then the events after
    /// `at`. `false` when the feed can no longer serve it.
    pub fn start_again(&self, id: u64, glimpse: &[Arc<str>], at: u64) -> bool {
        let mut state = self.state();
        let Some(sender) = state.taps.get(&id).map(|tap| tap.sender.clone()) else { return false };
        let Some(last) = state.catch_up(&sender, glimpse, at) else { return false };
        if let Some(tap) = state.taps.get_mut(&id) {
            tap.last = last;
        }
        true
    }

    /// A message of the stream (`seq`: its number, if an event), for every
    /// spectator that does not have it yet. A spectator whose queue is full
    /// is let go as fallen behind.
    pub fn deliver(&self, seq: Option<u64>, text: &str) {
        let mut state = self.state();
        let text: Arc<str> = Arc::from(text);
        if let Some(seq) = seq {
            // Given again after the feed was attached again: already given.
            if seq <= state.last {
                return;
            }
            state.last = seq;
            state.recent.push_back((seq, text.clone()));
            while state.recent.len() > RECENT {
                if let Some((gone, _)) = state.recent.pop_front() {
                    state.covered_after = gone;
                }
            }
        }
        let before = state.taps.len();
        state.taps.retain(|_, tap| {
            if seq.is_some_and(|s| s <= tap.last) {
                return true;
            }
            match tap.sender.try_send(text.clone()) {
                Ok(()) => {
                    tap.last = tap.last.max(seq.unwrap_or(0));
                    true
                }
                Err(e) => {
                    if matches!(e, mpsc::error::TrySendError::Full(_)) {
                        crate::metrics::subscriber_dropped();
                        let _ = tap.farewell.set(Farewell::FellBehind);
                    }
                    false
                }
            }
        });
        if state.taps.len() != before {
            self.left(&mut state);
        }
    }

    /// The feed has ended, for `why`: so does every spectator's stream.
    pub fn end(&self, why: Farewell) {
        let mut state = self.state();
        state.ended = true;
        for (_, tap) in state.taps.drain() {
            let _ = tap.farewell.set(why);
        }
        self.watchers.send_replace(0);
        self.unwanted.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: u64) -> String {
        format!(r#"{{"type":"event","seq":{seq}}}"#)
    }

    fn drain(c: &mut Connection) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(m) = c.outbound.try_recv() {
            out.push(m.to_string());
        }
        out
    }

    #[test]
    fn a_spectator_gets_its_glimpse_then_each_later_event_once() {
        let feed = Feed::new(10, 64);
        let mut early = feed.join(1, &["snapshot at 10".into()], 10).unwrap();
        for seq in 11..=13 {
            feed.deliver(Some(seq), &event(seq));
        }
        // Its glimpse brought this one to 12: it gets 13 from the recent events.
        let mut late = feed.join(2, &["snapshot at 12".into()], 12).unwrap();
        // One whose glimpse is ahead of the feed skips what it has.
        let mut ahead = feed.join(3, &["snapshot at 15".into()], 15).unwrap();
        feed.deliver(Some(13), &event(13));
        for seq in 14..=16 {
            feed.deliver(Some(seq), &event(seq));
        }
        feed.deliver(None, r#"{"type":"error"}"#);
        let e = |seqs: std::ops::RangeInclusive<u64>| seqs.map(event).collect::<Vec<_>>();
        let mut want = vec!["snapshot at 10".to_string()];
        want.extend(e(11..=16));
        want.push(r#"{"type":"error"}"#.into());
        assert_eq!(drain(&mut early), want);
        let mut want = vec!["snapshot at 12".to_string()];
        want.extend(e(13..=16));
        want.push(r#"{"type":"error"}"#.into());
        assert_eq!(drain(&mut late), want);
        assert_eq!(drain(&mut ahead), ["snapshot at 15".to_string(), event(16), r#"{"type":"error"}"#.into()]);
        assert_eq!(*feed.watchers().borrow(), 3);
    }

    #[test]
    fn a_spectator_from_before_the_feed_is_not_joined() {
        let feed = Feed::new(10, 64);
        assert!(feed.join(1, &[], 9).is_none(), "event 10 never came through the feed");
        for seq in 11..=(11 + RECENT as u64) {
            feed.deliver(Some(seq), &event(seq));
        }
        assert!(feed.join(2, &[], 10).is_none(), "event 11 is no longer kept");
        assert!(feed.join(3, &[], 11).is_none(), "kept, but more than a spectator's queue holds");
        let last = 11 + RECENT as u64;
        assert!(feed.join(4, &[], last - 10).is_some());
    }

    #[test]
    fn a_slow_spectator_is_let_go_and_the_last_to_leave_ends_the_feed() {
        let feed = Feed::new(0, 16);
        let slow = feed.join(1, &[], 0).unwrap();
        let mut quick = feed.join(2, &[], 0).unwrap();
        for seq in 1..=16 {
            feed.deliver(Some(seq), &event(seq));
            drain(&mut quick);
        }
        feed.deliver(Some(17), &event(17));
        assert_eq!(slow.farewell.get(), Some(&Farewell::FellBehind));
        assert!(!feed.feeds(1) && feed.feeds(2));
        assert_eq!(*feed.watchers().borrow(), 1);
        assert!(!feed.unwanted.is_cancelled());
        feed.leave(2);
        assert!(feed.unwanted.is_cancelled() && feed.has_ended(), "nobody watches");
        assert!(feed.join(3, &[], 17).is_none(), "a new feed is needed");
    }

    #[test]
    fn a_snapshot_asked_for_starts_the_spectator_again() {
        let feed = Feed::new(0, 64);
        let mut c = feed.join(1, &["snapshot at 0".into()], 0).unwrap();
        feed.deliver(Some(1), &event(1));
        feed.deliver(Some(2), &event(2));
        drain(&mut c);
        assert!(feed.start_again(1, &["snapshot at 1".into()], 1));
        feed.deliver(Some(3), &event(3));
        assert_eq!(drain(&mut c), ["snapshot at 1".to_string(), event(2), event(3)]);
        feed.tell(1, r#"{"type":"pong"}"#.into());
        assert_eq!(drain(&mut c), [r#"{"type":"pong"}"#]);
    }

    #[test]
    fn the_feed_s_end_ends_every_spectator_with_its_farewell() {
        let feed = Feed::new(0, 64);
        let mut c = feed.join(1, &[], 0).unwrap();
        feed.end(Farewell::Moved);
        assert_eq!(c.farewell.get(), Some(&Farewell::Moved));
        assert!(c.outbound.try_recv().is_err(), "closed");
        assert!(feed.has_ended() && feed.join(2, &[], 0).is_none());
    }
}
