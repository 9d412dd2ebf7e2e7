//! The socket's side of a relay: a stand-in ([`Remote`]) for a table played
//! on another node, whose commands go there by NATS request-reply and whose
//! streams come back to this node's sockets (a spectator's through the
//! node's feed of the table).

use super::*;

/// A stand-in for a table another node plays: a [`TableHandle`] whose
/// commands go over NATS to the owner.
#[derive(Debug)]
pub struct Remote {
    /// What clients of this node hold by the table (it was placed from
    /// here): counted against their quotas while the stand-in lives.
    pub held: Vec<Permit>,
    /// The stand-in's handle (what the lobby gives out).
    pub handle: TableHandle,
    /// The owner's node id.
    pub owner: String,
    /// Cancelled when the owner is gone: every relayed stream ends as moved.
    pub gone: CancellationToken,
}

/// Relay subjects are numbered per node.
static RELAYS: AtomicU64 = AtomicU64::new(0);

impl Remote {
    /// Starts the stand-in of table `id`, played by node `owner`. `me` is
    /// this node's id; `queue` the messages a relayed stream may hold for a
    /// slow socket. It ends when `gone` is cancelled, or when the owner says
    /// it does not have the table.
    pub fn start(bus: Bus, id: String, owner: String, me: String, queue: usize, unanswering: Unanswering) -> Remote {
        let (handle, commands) = TableHandle::channel(id.clone());
        let gone = CancellationToken::new();
        let stand_in = StandIn {
            bus,
            table: id,
            subject: node_subject(&owner),
            owner: owner.clone(),
            me,
            queue,
            gone: gone.clone(),
            unanswering,
            connections: Arc::default(),
            feed: Arc::default(),
        };
        tokio::spawn(stand_in.run(commands));
        Remote { held: Vec::new(), handle, owner, gone }
    }
}

/// What a table's reply channel carries, made from the owner's answer.
trait Answer: Send + Sized + 'static {
    /// What the owner sends when it succeeds.
    type Value: serde::de::DeserializeOwned + Send;
    /// The reply, or none (a reply that cannot say why it failed).
    fn from(answer: Result<Self::Value, TableError>) -> Option<Self>;
}

impl<T: serde::de::DeserializeOwned + Send + 'static> Answer for Result<T, TableError> {
    type Value = T;
    fn from(answer: Result<T, TableError>) -> Option<Self> {
        Some(answer)
    }
}

impl Answer for crate::protocol::ws::TableInfo {
    type Value = Self;
    fn from(answer: Result<Self, TableError>) -> Option<Self> {
        answer.ok()
    }
}

impl Answer for crate::rules::options::GameOptions {
    type Value = Self;
    fn from(answer: Result<Self, TableError>) -> Option<Self> {
        answer.ok()
    }
}

/// The nodes that did not answer a request lately, and when: a table of
/// theirs is told to be on its way elsewhere (`recovering`) rather than
/// asked again, until their lease runs out and another node takes it.
pub type Unanswering = Arc<Mutex<HashMap<String, std::time::Instant>>>;

#[derive(Clone)]
pub(super) struct StandIn {
    bus: Bus,
    table: String,
    subject: String,
    owner: String,
    unanswering: Unanswering,
    me: String,
    queue: usize,
    gone: CancellationToken,
    /// Each relayed socket's id here, and its connection's id at the owner
    /// now (they differ once its stream was attached again after a gap).
    connections: Arc<Mutex<HashMap<u64, u64>>>,
    /// The table's spectators here, fed by one relayed stream.
    feed: Arc<Mutex<Option<Arc<Feed>>>>,
}

impl StandIn {
    async fn run(self, mut commands: mpsc::Receiver<TableCommand>) {
        loop {
            let command = tokio::select! {
                command = commands.recv() => command,
                _ = self.gone.cancelled() => None,
            };
            let Some(command) = command else { break };
            let table = self.table.clone();
            match command {
                // Answers that cannot be refused: a failure drops the
                // reply, which the asker reads as the table closed.
                TableCommand::Info { reply } => self.ask_then(Ask::Info { table }, reply),
                TableCommand::Options { reply } => self.ask_then(Ask::Options { table }, reply),
                TableCommand::Sit { name, seat, account, session, hold, reply } => {
                    // The seat counts against the client's quota here, while the stand-in lives.
                    drop(hold);
                    self.ask_then(Ask::Sit { table, name, seat, account, session }, reply)
                }
                TableCommand::Leave { asker, reply } => self.ask_then(Ask::Leave { table, asker }, reply),
                TableCommand::AddRobot { seat, strategy, asker, reply } => {
                    self.ask_then(Ask::AddRobot { table, seat, strategy, asker }, reply)
                }
                TableCommand::RemoveRobot { seat, asker, reply } => {
                    self.ask_then(Ask::RemoveRobot { table, seat, asker }, reply)
                }
                TableCommand::Start { asker, robot_game, payer, reply } => {
                    let robot_game = robot_game.is_some();
                    let starter = payer.as_ref().map(HandsPayer::starter);
                    self.ask_then(Ask::Start { table, asker, robot_game, starter }, reply)
                }
                TableCommand::Abort { reply } => self.ask_then(Ask::Abort { table }, reply),
                TableCommand::Connect { token, account, since, replay_hand, reply } => {
                    let stand_in = self.clone();
                    tokio::spawn(async move {
                        let _ = reply.send(stand_in.connect(token, account, since, replay_hand).await);
                    });
                }
                // A spectator the feed serves is answered here.
                TableCommand::Message { connection, message } if self.feeds(connection) => {
                    self.answer_spectator(connection, &message);
                }
                TableCommand::BadMessage { connection, code, reason } if self.feeds(connection) => {
                    self.tell_spectator(connection, &ServerMessage::error(code, reason));
                }
                TableCommand::Disconnect { connection } if self.feeds(connection) => {
                    if let Some(feed) = self.feed() {
                        feed.leave(connection);
                    }
                }
                TableCommand::Message { connection, message } => {
                    let connection = self.at_owner(connection);
                    self.tell(&Ask::Message { table, connection, message }).await;
                }
                TableCommand::BadMessage { connection, code, reason } => {
                    let connection = self.at_owner(connection);
                    self.tell(&Ask::BadMessage { table, connection, code, reason }).await;
                }
                // Relayed connections say which relay they close themselves (see `connect`).
                TableCommand::Disconnect { .. } => {}
                // Only the owner's table counts spectators, and moves.
                TableCommand::Watching { .. } | TableCommand::MoveBetweenHands { .. } => {}
                // The owner's node hears of ended sessions itself.
                TableCommand::EndSeatTokens(_) => {}
                TableCommand::Shutdown { reply } | TableCommand::HandOver { reply } => {
                    let _ = reply.send(());
                    break;
                }
                TableCommand::GiveUp => break,
            }
        }
        self.gone.cancel();
    }

    /// A relayed socket's connection id at the owner now.
    fn at_owner(&self, local: u64) -> u64 {
        self.connections.lock().unwrap_or_else(|e| e.into_inner()).get(&local).copied().unwrap_or(local)
    }

    /// Publishes a command that needs no answer.
    async fn tell(&self, ask: &Ask) {
        let payload = serde_json::to_vec(ask).unwrap_or_default();
        let _ = self.bus.publish(self.subject.clone(), &payload).await;
    }

    /// Asks the owner, in a task of its own, and answers `reply` with the
    /// owner's answer.
    fn ask_then<R: Answer>(&self, ask: Ask, reply: oneshot::Sender<R>) {
        let stand_in = self.clone();
        tokio::spawn(async move {
            if let Some(answer) = R::from(stand_in.request::<R::Value>(&ask).await) {
                let _ = reply.send(answer);
            }
        });
    }

    /// Asks the owner and reads its answer. An owner that does not answer,
    /// or no longer has the table, ends the stand-in: the table is moving,
    /// and the next request finds where it went.
    async fn request<T: serde::de::DeserializeOwned>(&self, ask: &Ask) -> Result<T, TableError> {
        let payload = serde_json::to_vec(ask).unwrap_or_default();
        let asked = self.bus.request(self.subject.clone(), &payload, ANSWER_WITHIN).await;
        let answer: Result<T, TableError> = match asked {
            Ok(answer) => serde_json::from_slice(&answer)
                .unwrap_or_else(|e| Err(TableError::Invalid(format!("the table's node answered oddly: {e}")))),
            // No answer: the owner is gone or going; the table is on its way elsewhere.
            _ => {
                self.unanswering
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(self.owner.clone(), std::time::Instant::now());
                self.gone.cancel();
                return Err(TableError::Recovering);
            }
        };
        match answer {
            // The owner no longer has it: it is moving (handed over, taken
            // over), or it has just closed. Either way the next request
            // reads where it is now: come back shortly, which a closed
            // table answers with 404 then.
            Err(TableError::NoSuchTable(_) | TableError::Recovering) => {
                self.gone.cancel();
                Err(TableError::Recovering)
            }
            answer => answer,
        }
    }

    /// Connects to the owner's table. A spectator joins the table's feed
    /// here (its start answered by the owner, the rest shared); a seat's
    /// stream is relayed here for it alone.
    async fn connect(
        &self,
        token: Option<String>,
        account: Option<i64>,
        since: Option<u64>,
        replay_hand: bool,
    ) -> Result<Connection, TableError> {
        // Without a seat token the socket may be a spectator's (a logged-in
        // one's seat, if it has one, is found by the owner): asked to share.
        let share = token.is_none() && !replay_hand;
        let (connected, attached) = if share && account.is_none() {
            // Surely a spectator: nothing will be relayed for it alone.
            (self.glimpse(since).await?, None)
        } else {
            let (relay, frames, connected) = self.attach(token.clone(), account, since, replay_hand, share).await?;
            (connected, Some((relay, frames)))
        };
        let Some(glimpse) = connected.glimpse else {
            let (relay, frames) = attached.ok_or(TableError::Recovering)?;
            let relayed = Attached { relay, frames, connection: connected.connection, token, account, last_seq: since };
            return Ok(self.relay_to_socket(relayed, connected.seat, Vec::new()));
        };
        if let Some((_, mut frames)) = attached {
            let _ = frames.unsubscribe().await;
        }
        let glimpse: Vec<Arc<str>> = glimpse.into_iter().map(Arc::from).collect();
        let at = glimpse_end(&glimpse).or(since);
        if let Some(at) = at
            && let Some(connection) = self.watch(connected.connection, &glimpse, at).await
        {
            return Ok(connection);
        }
        // The feed cannot serve it: a stream of its own, after its glimpse.
        let (first, since) = if at.is_some() { (glimpse, at) } else { (Vec::new(), since) };
        let (relay, frames, connected) = self.attach(None, account, since, false, false).await?;
        let relayed =
            Attached { relay, frames, connection: connected.connection, token: None, account, last_seq: since };
        Ok(self.relay_to_socket(relayed, connected.seat, first))
    }

    /// A socket's own relayed stream, `first` given before it.
    fn relay_to_socket(&self, relayed: Attached, seat: Option<u8>, first: Vec<Arc<str>>) -> Connection {
        let (sender, outbound) = mpsc::channel(self.queue.max(first.len() + 1));
        for text in first {
            let _ = sender.try_send(text);
        }
        let farewell: Arc<OnceLock<Farewell>> = Arc::default();
        // The socket's id here is the first one the owner gave; a resumed
        // stream has another there.
        let local = relayed.connection;
        self.connections.lock().unwrap_or_else(|e| e.into_inner()).insert(local, local);
        let sink = Sink::Socket { local, sender, told: farewell.clone() };
        tokio::spawn(self.clone().pump(relayed, sink));
        Connection { id: local, seat, outbound, farewell }
    }

    /// The table's feed here, if it has one.
    fn feed(&self) -> Option<Arc<Feed>> {
        self.feed.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether socket `id` is a spectator the feed serves.
    fn feeds(&self, id: u64) -> bool {
        self.feed().is_some_and(|f| f.feeds(id))
    }

    /// Spectator `local` joins the feed after its glimpse, which brought it
    /// to event `at`; the first spectator starts the feed. `None` when the
    /// feed cannot serve it.
    async fn watch(&self, local: u64, glimpse: &[Arc<str>], at: u64) -> Option<Connection> {
        let (feed, new) = {
            let mut slot = self.feed.lock().unwrap_or_else(|e| e.into_inner());
            match &*slot {
                Some(feed) if !feed.has_ended() => (feed.clone(), false),
                _ => {
                    let feed = Feed::new(at, self.queue);
                    *slot = Some(feed.clone());
                    (feed, true)
                }
            }
        };
        let Some(connection) = feed.join(local, glimpse, at) else {
            if new {
                feed.end(Farewell::Moved);
            }
            return None;
        };
        if new {
            // One spectator's stream after `at`, relayed once for them all.
            match self.attach(None, None, Some(at), false, false).await {
                Ok((relay, frames, connected)) => {
                    let relayed = Attached {
                        relay,
                        frames,
                        connection: connected.connection,
                        token: None,
                        account: None,
                        last_seq: Some(at),
                    };
                    tokio::spawn(self.clone().pump(relayed, Sink::Feed(feed)));
                }
                // The socket closes as moved: its client connects again.
                Err(_) => feed.end(Farewell::Moved),
            }
        }
        Some(connection)
    }

    /// A spectator's start, asked of the owner without relaying anything:
    /// its snapshot, or the events after `since`.
    async fn glimpse(&self, since: Option<u64>) -> Result<Connected, TableError> {
        let ask = Ask::Connect {
            table: self.table.clone(),
            token: None,
            account: None,
            since,
            replay_hand: false,
            relay: String::new(),
            from: self.me.clone(),
            share: true,
        };
        let connected: Connected = self.request(&ask).await?;
        if connected.glimpse.is_none() {
            return Err(TableError::Invalid("the table's node relayed a spectator's stream it was to share".into()));
        }
        Ok(connected)
    }

    /// A spectator of the feed asked something: answered here, as its
    /// table would; a snapshot is the owner's.
    fn answer_spectator(&self, id: u64, message: &ClientMessage) {
        if let Some(answer) = crate::table::spectator_answer(message) {
            return self.tell_spectator(id, &answer);
        }
        let stand_in = self.clone();
        tokio::spawn(async move {
            let Some(feed) = stand_in.feed() else { return };
            let started = match stand_in.glimpse(None).await {
                Ok(Connected { glimpse: Some(glimpse), .. }) => {
                    let glimpse: Vec<Arc<str>> = glimpse.into_iter().map(Arc::from).collect();
                    glimpse_end(&glimpse).is_some_and(|at| feed.start_again(id, &glimpse, at))
                }
                _ => false,
            };
            if !started {
                // It reconnects, and gets its snapshot then.
                feed.let_go(id, Farewell::FellBehind);
            }
        });
    }

    fn tell_spectator(&self, id: u64, message: &ServerMessage) {
        if let Some(feed) = self.feed() {
            feed.tell(id, crate::table::stream::to_text(message));
        }
    }

    /// Subscribes to a new relay subject, then asks the owner to connect
    /// (resuming after `since`), its stream relayed there (or, `share` and
    /// a spectator, only its glimpse answered).
    async fn attach(
        &self,
        token: Option<String>,
        account: Option<i64>,
        since: Option<u64>,
        replay_hand: bool,
        share: bool,
    ) -> Result<(String, Heard, Connected), TableError> {
        let relay = format!("mj.relay.{}.{}", self.me, RELAYS.fetch_add(1, Ordering::Relaxed));
        // Subscribed before asking: nothing the owner sends is missed.
        let frames = self.bus.subscribe(relay.clone()).await.map_err(|_| TableError::Recovering)?;
        let table = self.table.clone();
        let ask = Ask::Connect {
            table,
            token,
            account,
            since,
            replay_hand,
            relay: relay.clone(),
            from: self.me.clone(),
            share,
        };
        let connected: Connected = self.request(&ask).await?;
        Ok((relay, frames, connected))
    }

    /// Hands a relayed stream's messages to its socket or feed, in order. A
    /// message lost on the way (a gap in the frames' numbers) is filled from
    /// the stored log: the stream is attached again after the last event
    /// given (`since`), invisibly to the sockets; only when that fails do
    /// they close as fallen behind (their clients then resume).
    async fn pump(self, mut relayed: Attached, sink: Sink) {
        let mut expected = 1u64;
        let mut watchers = sink.watchers();
        self.tell_watchers(&relayed, watchers.as_mut()).await;
        let why = loop {
            let watchers_changed = async {
                match watchers.as_mut() {
                    Some(w) => w.changed().await.is_ok(),
                    None => std::future::pending().await,
                }
            };
            let next = tokio::select! {
                next = relayed.frames.next() => next,
                // The socket closed, or the feed's last spectator left: tell the owner.
                _ = sink.unwanted() => break None,
                _ = self.gone.cancelled() => break Some(Farewell::Moved),
                true = watchers_changed => {
                    self.tell_watchers(&relayed, watchers.as_mut()).await;
                    continue;
                }
            };
            let Some(message) = next else { break Some(Farewell::Moved) };
            let Some((n, kind, body)) = read_frame(&message.payload) else { continue };
            if n != expected {
                match self.resume(&mut relayed, &sink).await {
                    Ok(()) => {
                        crate::metrics::gap_filled();
                        expected = 1;
                        self.tell_watchers(&relayed, watchers.as_mut()).await;
                        continue;
                    }
                    Err(()) => break Some(Farewell::FellBehind),
                }
            }
            expected += 1;
            if kind == 'e' {
                break Some(farewell_of(body));
            }
            let seq = event_seq(body);
            if seq.is_some() {
                relayed.last_seq = seq;
            }
            if !sink.give(seq, body) {
                break Some(Farewell::FellBehind);
            }
        };
        let _ = relayed.frames.unsubscribe().await;
        sink.end(why);
        if why != Some(Farewell::Moved) || !self.gone.is_cancelled() {
            let Attached { relay, connection, .. } = relayed;
            self.tell(&Ask::Disconnect { table: self.table.clone(), connection, relay }).await;
        }
        if let Sink::Socket { local, .. } = sink {
            self.connections.lock().unwrap_or_else(|e| e.into_inner()).remove(&local);
        }
    }

    /// Tells the owner how many spectators a feed stands for (nothing for
    /// a socket's own stream).
    async fn tell_watchers(&self, relayed: &Attached, watchers: Option<&mut watch::Receiver<usize>>) {
        let Some(watchers) = watchers else { return };
        let count = *watchers.borrow_and_update();
        self.tell(&Ask::Watching { table: self.table.clone(), connection: relayed.connection, count }).await;
    }

    /// Attaches a stream that missed a message again, after the last event
    /// its socket was given; the old attachment is let go.
    async fn resume(&self, relayed: &mut Attached, sink: &Sink) -> Result<(), ()> {
        // Without an event yet, there is nothing to resume after.
        let since = relayed.last_seq.ok_or(())?;
        let (relay, frames, connected) =
            self.attach(relayed.token.clone(), relayed.account, Some(since), false, false).await.map_err(drop)?;
        let fresh = Attached {
            relay,
            frames,
            connection: connected.connection,
            token: relayed.token.clone(),
            account: relayed.account,
            last_seq: Some(since),
        };
        let Attached { relay: old_relay, frames: mut old_frames, connection: old_connection, .. } =
            std::mem::replace(relayed, fresh);
        let _ = old_frames.unsubscribe().await;
        self.tell(&Ask::Disconnect { table: self.table.clone(), connection: old_connection, relay: old_relay }).await;
        if let Sink::Socket { local, .. } = sink {
            self.connections.lock().unwrap_or_else(|e| e.into_inner()).insert(*local, relayed.connection);
        }
        Ok(())
    }
}

/// Where a relayed stream's messages go: one socket, or this node's feed of
/// the table's spectators.
pub(super) enum Sink {
    Socket { local: u64, sender: mpsc::Sender<Arc<str>>, told: Arc<OnceLock<Farewell>> },
    Feed(Arc<Feed>),
}

impl Sink {
    /// Ends when nobody wants the stream any more.
    async fn unwanted(&self) {
        match self {
            Sink::Socket { sender, .. } => sender.closed().await,
            Sink::Feed(feed) => feed.unwanted.cancelled().await,
        }
    }

    /// A feed's count of spectators, as it changes.
    fn watchers(&self) -> Option<watch::Receiver<usize>> {
        match self {
            Sink::Socket { .. } => None,
            Sink::Feed(feed) => Some(feed.watchers()),
        }
    }

    /// Gives one message (`seq`: its number, if an event); `false` when a
    /// socket's queue is full (a feed lets its slow spectators go itself).
    fn give(&self, seq: Option<u64>, text: &str) -> bool {
        match self {
            Sink::Socket { sender, .. } => sender.try_send(Arc::from(text)).is_ok(),
            Sink::Feed(feed) => {
                feed.deliver(seq, text);
                true
            }
        }
    }

    /// The stream ended, for `why` (`None`: nobody wanted it).
    fn end(&self, why: Option<Farewell>) {
        match self {
            Sink::Socket { told, .. } => {
                if let Some(why) = why {
                    let _ = told.set(why);
                }
            }
            Sink::Feed(feed) => feed.end(why.unwrap_or(Farewell::Moved)),
        }
    }
}

/// The last event a spectator's glimpse brings it to: its last event's
/// number, or its snapshot's (`None` for neither).
pub(super) fn glimpse_end(glimpse: &[Arc<str>]) -> Option<u64> {
    glimpse
        .iter()
        .filter_map(|text| {
            event_seq(text).or_else(|| {
                let snapshot: serde_json::Value = serde_json::from_str(text).ok()?;
                (snapshot["type"] == "snapshot").then(|| snapshot["table"]["seq"].as_u64()).flatten()
            })
        })
        .max()
}

/// One relayed stream as its pump holds it: the subject and subscription
/// it comes on, the connection at the owner, and what reattaches it.
pub(super) struct Attached {
    relay: String,
    frames: Heard,
    /// The connection's id at the owner now.
    connection: u64,
    token: Option<String>,
    account: Option<i64>,
    /// The last event given to the socket.
    last_seq: Option<u64>,
}

/// The sequence number of an event message (`{"type":"event","seq":N,...}`,
/// as the table writes it), without reading the rest.
pub(super) fn event_seq(text: &str) -> Option<u64> {
    let rest = text.strip_prefix(r#"{"type":"event","seq":"#)?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).map_or(rest, |end| &rest[..end]);
    digits.parse().ok()
}
