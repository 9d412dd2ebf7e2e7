//! A table's stream: every event the table sends, numbered in one sequence,
//! kept for clients that resume (the current and the previous hand), and
//! fanned out to exactly the subscribers that may see it.
//!
//! An event is numbered when it happens but held in the outbox until the
//! table has stored it ([`Stream::release`]): a client never sees an event
//! the store could lose. Each subscriber has a bounded queue; one whose queue
//! is full is dropped (its socket closes; the client reconnects for a fresh
//! snapshot), so a slow client never stalls the table.
//!
//! What is kept in memory is bounded: a table's chat (the stored log keeps
//! every message) by the `chats_kept` it is made with, and the whole log by
//! [`MAX_LOGGED`]; a client resuming from before what was let go gets a
//! snapshot instead.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;

use super::{Connection, Farewell, TableError};
use crate::protocol::ws::{ServerMessage, StreamEvent};
use crate::rules::command::PlayerId;
use crate::rules::event::Audience;

/// A connected client: a seat's player, or a spectator.
#[derive(Debug)]
struct Subscriber {
    seat: Option<u8>,
    sender: mpsc::Sender<Arc<str>>,
    farewell: Arc<OnceLock<Farewell>>,
    /// The spectators it counts for: 1, or (cluster mode) those of another
    /// node that it feeds, [`Stream::stands_for`].
    watchers: usize,
}

/// One event of the stream, kept for clients that resume.
#[derive(Debug)]
struct Logged {
    seq: u64,
    to: Audience,
    text: Arc<str>,
    /// A chat message (kept in memory only up to the stream's `chats_kept`).
    chat: bool,
}

/// Events kept in memory for resuming, at most: a hand has a few hundred, so
/// only a table where nothing is dealt for a long while (seats taken and
/// left over and over) reaches it.
pub const MAX_LOGGED: usize = 4096;

/// Whether a stored event's text is a chat message (the table's own
/// serialisation, [`to_text`], writes the event's type first).
fn is_chat_text(text: &str) -> bool {
    text.contains(r#""event":{"type":"chat""#)
}

/// A subscriber the stream dropped because its queue was full, or because
/// its socket is gone: the table must forget its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    /// The connection.
    pub connection: u64,
    /// The seat it acted for, `None` for a spectator.
    pub seat: Option<u8>,
    /// Its socket had already ended (the client left, or the server is
    /// stopping), rather than falling behind. The socket's own
    /// `Disconnect` is on its way, but finds the connection forgotten: what
    /// a disconnection does (`--end-on-disconnect`) must be done now.
    pub gone: bool,
}

impl Dropped {
    /// The subscriber `connection`, which `error` refused a message.
    fn by(connection: u64, sub: &Subscriber, error: &mpsc::error::TrySendError<Arc<str>>) -> Dropped {
        let gone = matches!(error, mpsc::error::TrySendError::Closed(_));
        if !gone {
            crate::metrics::subscriber_dropped();
            let _ = sub.farewell.set(Farewell::FellBehind);
        }
        Dropped { connection, seat: sub.seat, gone }
    }
}

/// The numbered stream of a table and its subscribers.
#[derive(Debug)]
pub struct Stream {
    /// The last sequence number given.
    seq: u64,
    /// Recent events (the current and previous hand), for resuming.
    log: VecDeque<Logged>,
    /// Events before this number are no longer kept.
    log_start: u64,
    /// The first number of the hand being played.
    hand_started: u64,
    subscribers: BTreeMap<u64, Subscriber>,
    next_connection: u64,
    /// Messages a subscriber's queue holds before it is dropped as too slow.
    queue: usize,
    /// Numbered events waiting for their batch to be stored.
    outbox: Vec<(Audience, Arc<str>)>,
    /// Chat messages in `log`, and how many may be.
    chats: usize,
    chats_kept: usize,
}

/// Serialises a message the server sends (our own types always serialise).
pub fn to_text(message: &ServerMessage) -> Arc<str> {
    serde_json::to_string(message).unwrap_or_default().into()
}

impl Stream {
    /// An empty stream whose subscribers may queue `queue` messages (at
    /// least 16), keeping at most `chats_kept` chat messages in memory.
    pub fn new(queue: usize, chats_kept: usize) -> Stream {
        Stream {
            seq: 0,
            log: VecDeque::new(),
            log_start: 1,
            hand_started: 1,
            subscribers: BTreeMap::new(),
            next_connection: 1,
            queue: queue.max(16),
            outbox: Vec::new(),
            chats: 0,
            chats_kept,
        }
    }

    /// Keeps an event for clients that resume, within the bounds.
    fn log(&mut self, entry: Logged) {
        self.chats += usize::from(entry.chat);
        self.log.push_back(entry);
        self.trim();
    }

    /// Lets the oldest chat messages go beyond what may be kept, and the
    /// oldest events beyond [`MAX_LOGGED`]; a client resuming from before
    /// one let go gets a snapshot.
    fn trim(&mut self) {
        while self.chats > self.chats_kept {
            let Some(at) = self.log.iter().position(|e| e.chat) else { break };
            if let Some(gone) = self.log.remove(at) {
                self.chats -= 1;
                self.log_start = self.log_start.max(gone.seq + 1);
            }
        }
        while self.log.len() > MAX_LOGGED {
            if let Some(gone) = self.log.pop_front() {
                self.chats -= usize::from(gone.chat);
                self.log_start = self.log_start.max(gone.seq + 1);
            }
        }
    }

    /// A stream that continues after `seq`, with the stored events of the
    /// previous and current hands (`(seq, audience, text, hand)`, in order)
    /// for clients that resume. `current_hand` is the hand being played or
    /// last played. At most `chats_kept` chat messages are kept.
    pub fn resumed(
        queue: usize,
        chats_kept: usize,
        seq: u64,
        events: impl IntoIterator<Item = (u64, Audience, Arc<str>, i64)>,
        current_hand: i64,
    ) -> Stream {
        let mut stream = Stream::new(queue, chats_kept);
        stream.seq = seq;
        stream.log_start = seq + 1;
        stream.hand_started = seq + 1;
        let mut first = true;
        let mut hand_found = false;
        for (seq, to, text, hand) in events {
            if hand < current_hand - 1 {
                continue;
            }
            if first {
                stream.log_start = seq;
                first = false;
            }
            if hand == current_hand && !hand_found {
                stream.hand_started = seq;
                hand_found = true;
            }
            let chat = is_chat_text(&text);
            stream.log(Logged { seq, to, text, chat });
        }
        stream
    }

    /// The last sequence number given.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Numbers an event and logs it; it waits in the outbox until
    /// [`Stream::release`]. Returns its number and its text (for the store).
    pub fn push(&mut self, to: Audience, event: StreamEvent, at_us: u64) -> (u64, Arc<str>) {
        self.seq += 1;
        let chat = matches!(event, StreamEvent::Table(crate::protocol::ws::TableEvent::Chat { .. }));
        let text = to_text(&ServerMessage::Event { seq: self.seq, at_us, event });
        self.log(Logged { seq: self.seq, to, text: text.clone(), chat });
        self.outbox.push((to, text.clone()));
        (self.seq, text)
    }

    /// A new hand is dealt: the events of the hand before the one that just
    /// ended are no longer kept.
    pub fn new_hand(&mut self) {
        let keep_from = self.hand_started;
        while self.log.front().is_some_and(|e| e.seq < keep_from) {
            if let Some(gone) = self.log.pop_front() {
                self.chats -= usize::from(gone.chat);
            }
        }
        self.log_start = keep_from.max(1);
        self.hand_started = self.seq + 1;
    }

    /// A new connection's id.
    pub fn next_connection(&mut self) -> u64 {
        let id = self.next_connection;
        self.next_connection += 1;
        id
    }

    /// Subscribes connection `id` (from [`Stream::next_connection`]) for
    /// `seat` (`None`: a spectator). A client that gives `since` is sent the
    /// events after it that it may see, and the answer is `false`. Without
    /// `since`, or when `since` is older than what is kept or more than its
    /// queue holds, nothing is sent and the answer is `true`: the client
    /// needs a snapshot first, which the caller sends with [`Stream::send_to`]
    /// (once the subscriber counts, so that the snapshot shows it).
    pub fn subscribe(
        &mut self,
        id: u64,
        seat: Option<u8>,
        since: Option<u64>,
    ) -> Result<(Connection, bool), TableError> {
        if let Some(s) = since
            && s > self.seq
        {
            return Err(TableError::Invalid(format!("since={s} is ahead of the table's stream (at {})", self.seq)));
        }
        let (sender, outbound) = mpsc::channel(self.queue);
        let viewer = seat.map(PlayerId);
        let missed: Vec<Arc<str>> = match since {
            Some(s) if s + 1 >= self.log_start => {
                self.log.iter().filter(|e| e.seq > s && e.to.includes(viewer)).map(|e| e.text.clone()).collect()
            }
            _ => Vec::new(),
        };
        // What is missed must fit in the queue, with room for a prompt after it.
        let resumable = matches!(since, Some(s) if s + 1 >= self.log_start) && missed.len() < sender.capacity();
        if resumable {
            for text in missed {
                let _ = sender.try_send(text);
            }
        }
        let farewell = Arc::new(OnceLock::new());
        self.subscribers.insert(id, Subscriber { seat, sender, farewell: farewell.clone(), watchers: 1 });
        Ok((Connection { id, seat, outbound, farewell }, !resumable))
    }

    /// Forgets a connection whose socket has ended; returns its seat
    /// (`Some(None)` for a spectator) if it was subscribed.
    pub fn unsubscribe(&mut self, id: u64) -> Option<Option<u8>> {
        self.subscribers.remove(&id).map(|s| s.seat)
    }

    /// Lets a connection go for `why`: its socket closes saying so.
    pub fn let_go(&mut self, id: u64, why: Farewell) {
        // Told before the sender is dropped (with the subscriber).
        if let Some(sub) = self.subscribers.remove(&id) {
            let _ = sub.farewell.set(why);
        }
    }

    /// Lets every connection go for `why` (the table stops here).
    pub fn let_everyone_go(&mut self, why: Farewell) {
        for (_, sub) in std::mem::take(&mut self.subscribers) {
            let _ = sub.farewell.set(why);
        }
    }

    /// The seat a connection acts for (`Some(None)`: a spectator), if subscribed.
    pub fn seat_of(&self, id: u64) -> Option<Option<u8>> {
        self.subscribers.get(&id).map(|s| s.seat)
    }

    /// Sends connection `id` again the events of the hand being played that
    /// it may see, from the deal on (only those already stored): the
    /// classic protocol's reconnection replays the hand, as mj-server's
    /// does. A queue too small for them drops the subscriber.
    pub fn replay_hand(&mut self, id: u64) -> Option<Dropped> {
        let sub = self.subscribers.get(&id)?;
        let viewer = sub.seat.map(PlayerId);
        let stored = self.seq - self.outbox.len() as u64;
        let hand: Vec<Arc<str>> = self
            .log
            .iter()
            .filter(|e| e.seq >= self.hand_started && e.seq <= stored && e.to.includes(viewer))
            .map(|e| e.text.clone())
            .collect();
        for text in hand {
            if let Some(dropped) = self.send_to(id, text) {
                return Some(dropped);
            }
        }
        None
    }

    /// Sends one message to one connection, outside the numbered stream (an
    /// answer, an error, a prompt). A full queue drops the subscriber.
    pub fn send_to(&mut self, id: u64, text: Arc<str>) -> Option<Dropped> {
        let sub = self.subscribers.get(&id)?;
        let dropped = Dropped::by(id, sub, &sub.sender.try_send(text).err()?);
        self.subscribers.remove(&id);
        Some(dropped)
    }

    /// Sends one message to every connection, outside the numbered stream
    /// (a notice about the table itself); returns the subscribers dropped.
    pub fn tell_everyone(&mut self, message: &ServerMessage) -> Vec<Dropped> {
        let text = to_text(message);
        let mut dropped = Vec::new();
        self.subscribers.retain(|&id, sub| match sub.sender.try_send(text.clone()) {
            Ok(()) => true,
            Err(e) => {
                dropped.push(Dropped::by(id, sub, &e));
                false
            }
        });
        dropped
    }

    /// Sends the stored events waiting in the outbox to every subscriber
    /// that may see them; returns the subscribers dropped as too slow.
    pub fn release(&mut self) -> Vec<Dropped> {
        let mut dropped = Vec::new();
        crate::metrics::events_sent(self.outbox.len());
        for (to, text) in std::mem::take(&mut self.outbox) {
            self.subscribers.retain(|&id, sub| {
                if !to.includes(sub.seat.map(PlayerId)) {
                    return true;
                }
                match sub.sender.try_send(text.clone()) {
                    Ok(()) => true,
                    Err(e) => {
                        dropped.push(Dropped::by(id, sub, &e));
                        false
                    }
                }
            });
        }
        dropped
    }

    /// True while numbered events wait for their batch to be stored.
    pub fn has_unreleased(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Connected spectators (those another node's feed stands for included).
    pub fn spectators(&self) -> usize {
        self.subscribers.values().filter(|s| s.seat.is_none()).map(|s| s.watchers).sum()
    }

    /// Cluster mode: spectator connection `id` feeds `count` spectators of
    /// another node (see `cluster::feed`).
    pub fn stands_for(&mut self, id: u64, count: usize) {
        if let Some(sub) = self.subscribers.get_mut(&id).filter(|s| s.seat.is_none()) {
            sub.watchers = count;
        }
    }

    /// True when nobody is connected.
    pub fn is_empty(&self) -> bool {
        self.subscribers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ws::TableEvent;

    fn chat(text: &str) -> StreamEvent {
        StreamEvent::Table(TableEvent::Chat { seat: 0, name: "A".into(), text: text.into() })
    }

    fn drain(c: &mut Connection) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(m) = c.outbound.try_recv() {
            out.push(m.to_string());
        }
        out
    }

    fn seqs(texts: &[String]) -> Vec<u64> {
        texts
            .iter()
            .filter_map(|t| match serde_json::from_str::<ServerMessage>(t).unwrap() {
                ServerMessage::Event { seq, .. } => Some(seq),
                _ => None,
            })
            .collect()
    }

    /// Subscribes as the table does: a snapshot first when one is needed.
    fn subscribe(s: &mut Stream, seat: Option<u8>, since: Option<u64>) -> Result<Connection, TableError> {
        let id = s.next_connection();
        let (c, needs_snapshot) = s.subscribe(id, seat, since)?;
        if needs_snapshot {
            s.send_to(id, "snapshot".into());
        }
        Ok(c)
    }

    #[test]
    fn events_wait_until_released_and_go_only_where_they_may() {
        let mut s = Stream::new(64, 200);
        let mut east = subscribe(&mut s, Some(0), Some(0)).unwrap();
        let mut watcher = subscribe(&mut s, None, Some(0)).unwrap();
        s.push(Audience::Everyone, chat("all"), 1);
        s.push(Audience::Only(PlayerId(0)), chat("east"), 2);
        s.push(Audience::AllBut(PlayerId(0)), chat("not east"), 3);
        assert!(drain(&mut east).is_empty(), "nothing is sent before it is stored");
        assert!(s.release().is_empty());
        assert_eq!(seqs(&drain(&mut east)), [1, 2]);
        assert_eq!(seqs(&drain(&mut watcher)), [1, 3]);
        assert_eq!(s.seq(), 3);
        assert_eq!(s.spectators(), 1);
        s.stands_for(watcher.id, 7);
        s.stands_for(east.id, 9);
        assert_eq!(s.spectators(), 7, "a feed counts its spectators; a seat is none");
    }

    #[test]
    fn resuming_gives_what_was_missed_or_a_snapshot() {
        let mut s = Stream::new(64, 200);
        for i in 0..5 {
            s.push(Audience::Everyone, chat(&i.to_string()), i);
        }
        s.release();
        let mut c = subscribe(&mut s, Some(1), Some(3)).unwrap();
        assert_eq!(seqs(&drain(&mut c)), [4, 5], "the events after 3");
        let mut c = subscribe(&mut s, Some(1), None).unwrap();
        assert_eq!(drain(&mut c), ["snapshot"], "no position: a snapshot");
        assert!(matches!(subscribe(&mut s, None, Some(6)), Err(TableError::Invalid(_))), "ahead");
        // Two hands later the first hand's events are gone: an old position
        // gets a snapshot.
        s.new_hand();
        s.push(Audience::Everyone, chat("hand 1"), 6);
        s.new_hand();
        s.push(Audience::Everyone, chat("hand 2"), 7);
        s.release();
        let mut c = subscribe(&mut s, None, Some(2)).unwrap();
        assert_eq!(drain(&mut c), ["snapshot"]);
        let mut c = subscribe(&mut s, None, Some(5)).unwrap();
        assert_eq!(seqs(&drain(&mut c)), [6, 7], "the previous hand is kept");
    }

    #[test]
    fn a_slow_subscriber_is_dropped_not_waited_for() {
        let mut s = Stream::new(16, 200);
        let mut slow = subscribe(&mut s, Some(2), Some(0)).unwrap();
        let id = slow.id;
        for i in 0..17 {
            s.push(Audience::Everyone, chat(&i.to_string()), i);
        }
        assert_eq!(s.release(), [Dropped { connection: id, seat: Some(2), gone: false }]);
        assert_eq!(slow.farewell.get(), Some(&Farewell::FellBehind), "told why");
        assert!(s.is_empty());
        assert_eq!(drain(&mut slow).len(), 16, "what fitted was queued");
        assert!(slow.outbound.try_recv().is_err(), "then the queue closed");
    }

    #[test]
    fn a_subscriber_whose_socket_ended_is_dropped_as_gone() {
        // The socket's writer ends (the client closed it) before its
        // Disconnect reaches the table: the table learns it from the stream,
        // and must treat it as the client leaving, not as falling behind.
        let mut s = Stream::new(16, 200);
        let (left, stays) = (subscribe(&mut s, Some(0), Some(0)).unwrap(), subscribe(&mut s, None, Some(0)).unwrap());
        let id = left.id;
        drop(left);
        s.push(Audience::Everyone, chat("hello"), 1);
        assert_eq!(s.release(), [Dropped { connection: id, seat: Some(0), gone: true }]);
        assert_eq!(s.send_to(id, "nobody".into()), None, "forgotten");
        drop(stays);
    }

    #[test]
    fn chat_kept_in_memory_is_bounded_and_an_older_position_gets_a_snapshot() {
        let mut s = Stream::new(64, 3);
        s.push(Audience::Everyone, StreamEvent::Table(TableEvent::GameStarted), 0);
        for i in 0..10 {
            s.push(Audience::Everyone, chat(&i.to_string()), i);
        }
        s.release();
        assert_eq!(s.chats, 3);
        assert_eq!(s.log.len(), 4, "the game's event and the last three chats");
        let mut c = subscribe(&mut s, None, Some(8)).unwrap();
        assert_eq!(seqs(&drain(&mut c)), [9, 10, 11]);
        let mut c = subscribe(&mut s, None, Some(2)).unwrap();
        assert_eq!(drain(&mut c), ["snapshot"], "chats after 2 were let go");
        for i in 0..MAX_LOGGED + 10 {
            s.push(Audience::Everyone, StreamEvent::Table(TableEvent::SeatLeft { seat: 0 }), i as u64);
        }
        assert_eq!(s.log.len(), MAX_LOGGED);
        assert!(s.chats <= 3);
        let text = to_text(&ServerMessage::Event { seq: 1, at_us: 0, event: chat("x") });
        assert!(is_chat_text(&text), "{text}");
    }

    #[test]
    fn a_resumed_stream_continues_its_numbering() {
        let event = |seq: u64, hand: i64| {
            let text = to_text(&ServerMessage::Event { seq, at_us: 0, event: chat("x") });
            (seq, Audience::Everyone, text, hand)
        };
        let stored = [event(1, 0), event(2, 1), event(3, 2), event(4, 3), event(5, 3)];
        let mut s = Stream::resumed(64, 200, 5, stored, 3);
        let mut c = subscribe(&mut s, None, Some(2)).unwrap();
        assert_eq!(seqs(&drain(&mut c)), [3, 4, 5], "hands 2 and 3 are kept");
        let mut c = subscribe(&mut s, None, Some(1)).unwrap();
        assert_eq!(drain(&mut c), ["snapshot"], "hand 1 is not");
        assert_eq!(s.push(Audience::Everyone, chat("next"), 0).0, 6);
        // A table brought back keeps its bound on chat too.
        let stored = [event(1, 3), event(2, 3), event(3, 3), event(4, 3), event(5, 3)];
        let s = Stream::resumed(64, 2, 5, stored, 3);
        assert_eq!((s.chats, s.log.len(), s.log_start), (2, 2, 4));
    }
}
