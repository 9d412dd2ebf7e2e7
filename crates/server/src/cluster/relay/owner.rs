//! The owner's side of a relay: the node that plays a table answers the
//! other nodes' commands for it and publishes each relayed connection's
//! stream, numbered, on the subject its node asked for.

use super::*;

/// The owner's record of a connection relayed to another node.
#[derive(Debug)]
pub(super) struct Relayed {
    table: TableHandle,
    connection: u64,
    /// The node of the socket.
    from: String,
    stop: CancellationToken,
}

/// The owner's side: answers other nodes' commands for its tables.
#[derive(Debug)]
pub struct Owner {
    bus: Bus,
    lobby: Arc<Lobby>,
    relays: Mutex<HashMap<String, Relayed>>,
}

impl Owner {
    /// Serves the commands sent to this node.
    pub fn new(bus: Bus, lobby: Arc<Lobby>) -> Arc<Owner> {
        Arc::new(Owner { bus, lobby, relays: Mutex::default() })
    }

    /// Handles the messages of `subscriber` (this node's subject) until it
    /// ends. Moves and disconnections are handled in the order they came;
    /// requests each in a task of its own.
    pub async fn serve(self: Arc<Self>, mut subscriber: Heard) {
        while let Some(message) = subscriber.next().await {
            let ask: Ask = match serde_json::from_slice(&message.payload) {
                Ok(ask) => ask,
                Err(e) => {
                    tracing::warn!("a cluster command that does not read: {e}");
                    continue;
                }
            };
            match ask {
                Ask::Message { table, connection, message } => {
                    if let Ok(handle) = self.lobby.get(&table) {
                        let _ = handle.send(TableCommand::Message { connection, message }).await;
                    }
                }
                Ask::BadMessage { table, connection, code, reason } => {
                    if let Ok(handle) = self.lobby.get(&table) {
                        let _ = handle.send(TableCommand::BadMessage { connection, code, reason }).await;
                    }
                }
                Ask::Watching { table, connection, count } => {
                    if let Ok(handle) = self.lobby.get(&table) {
                        let _ = handle.send(TableCommand::Watching { connection, count }).await;
                    }
                }
                Ask::Disconnect { table, connection, relay } => {
                    if let Some(relayed) = self.take_relay(&relay) {
                        relayed.stop.cancel();
                    }
                    if let Ok(handle) = self.lobby.get(&table) {
                        let _ = handle.send(TableCommand::Disconnect { connection }).await;
                    }
                }
                ask => {
                    let Some(reply) = message.reply else { continue };
                    let owner = self.clone();
                    tokio::spawn(async move {
                        let answer = owner.answer(ask).await;
                        let _ = owner.bus.publish(reply.to_string(), &answer).await;
                    });
                }
            }
        }
    }

    fn take_relay(&self, relay: &str) -> Option<Relayed> {
        self.relays.lock().unwrap_or_else(|e| e.into_inner()).remove(relay)
    }

    /// Ends the relayed connections of nodes no longer alive: their sockets
    /// are gone with them.
    pub async fn forget_nodes_but(&self, alive: &[String]) {
        let gone: Vec<Relayed> = {
            let mut relays = self.relays.lock().unwrap_or_else(|e| e.into_inner());
            let dead: Vec<String> =
                relays.iter().filter(|(_, r)| !alive.contains(&r.from)).map(|(k, _)| k.clone()).collect();
            dead.into_iter().filter_map(|k| relays.remove(&k)).collect()
        };
        for relayed in gone {
            relayed.stop.cancel();
            let _ = relayed.table.send(TableCommand::Disconnect { connection: relayed.connection }).await;
        }
    }

    /// The answer to one request, as JSON.
    async fn answer(&self, ask: Ask) -> Vec<u8> {
        fn json<T: Serialize>(value: &Result<T, TableError>) -> Vec<u8> {
            serde_json::to_vec(value).unwrap_or_default()
        }
        if let Ask::Open { settings, robots, start, starter } = ask {
            let payer = starter.map(|s| self.lobby.quotas().hands_payer(s));
            let setup = TableSetup { settings: *settings, robots, start, hold: Permit::uncounted(), payer };
            let opened = match self.lobby.open(setup).await {
                Ok(handle) => Ok(handle.id),
                Err(OpenError::Table(e)) => Err(e),
                Err(OpenError::Store(e)) => {
                    tracing::warn!("a table placed here could not be opened: {e}");
                    Err(TableError::StoreUnavailable)
                }
            };
            return json::<String>(&opened);
        }
        let table = match &ask {
            Ask::Open { .. } => String::new(),
            Ask::Info { table }
            | Ask::Options { table }
            | Ask::Sit { table, .. }
            | Ask::Leave { table, .. }
            | Ask::AddRobot { table, .. }
            | Ask::RemoveRobot { table, .. }
            | Ask::Start { table, .. }
            | Ask::Abort { table }
            | Ask::Connect { table, .. }
            | Ask::Message { table, .. }
            | Ask::BadMessage { table, .. }
            | Ask::Watching { table, .. }
            | Ask::Disconnect { table, .. } => table.clone(),
        };
        // Only this node's own tables: never relayed on again.
        let handle = match self.lobby.get(&table) {
            Ok(handle) => handle,
            Err(e) => return json::<()>(&Err(e)),
        };
        match ask {
            Ask::Info { .. } => json(&self.lobby.info(&handle).await),
            Ask::Options { .. } => json(&handle.ask(|reply| TableCommand::Options { reply }).await),
            Ask::Sit { name, seat, account, session, .. } => {
                let hold = Permit::uncounted();
                let sat = handle.ask(|reply| TableCommand::Sit { name, seat, account, session, hold, reply }).await;
                json::<SeatGrant>(&sat.and_then(|r| r))
            }
            Ask::Leave { asker, .. } => {
                json::<()>(&handle.ask(|reply| TableCommand::Leave { asker, reply }).await.and_then(|r| r))
            }
            Ask::AddRobot { seat, strategy, asker, .. } => json::<u8>(
                &handle.ask(|reply| TableCommand::AddRobot { seat, strategy, asker, reply }).await.and_then(|r| r),
            ),
            Ask::RemoveRobot { seat, asker, .. } => {
                json::<()>(&handle.ask(|reply| TableCommand::RemoveRobot { seat, asker, reply }).await.and_then(|r| r))
            }
            Ask::Start { asker, robot_game, starter, .. } => {
                let robot_game = robot_game.then(Permit::uncounted);
                let payer = starter.map(|s| self.lobby.quotas().hands_payer(s));
                json::<()>(
                    &handle.ask(|reply| TableCommand::Start { asker, robot_game, payer, reply }).await.and_then(|r| r),
                )
            }
            Ask::Abort { .. } => json::<()>(&handle.ask(|reply| TableCommand::Abort { reply }).await.and_then(|r| r)),
            Ask::Connect { token, account, since, replay_hand, relay, from, share, .. } => {
                let connected = handle
                    .ask(|reply| TableCommand::Connect { token, account, since, replay_hand, reply })
                    .await
                    .and_then(|r| r);
                match connected {
                    Ok(connection) if share && connection.seat.is_none() => {
                        json(&Ok(glimpse(connection, &handle).await))
                    }
                    Ok(connection) => {
                        let answer = Connected { connection: connection.id, seat: connection.seat, glimpse: None };
                        let stop = CancellationToken::new();
                        self.relays.lock().unwrap_or_else(|e| e.into_inner()).insert(
                            relay.clone(),
                            Relayed { table: handle.clone(), connection: connection.id, from, stop: stop.clone() },
                        );
                        tokio::spawn(pump(self.bus.clone(), relay, connection, handle, stop));
                        json(&Ok(answer))
                    }
                    Err(e) => json::<Connected>(&Err(e)),
                }
            }
            // Handled in order by `serve`, and above.
            Ask::Message { .. }
            | Ask::BadMessage { .. }
            | Ask::Watching { .. }
            | Ask::Disconnect { .. }
            | Ask::Open { .. } => Vec::new(),
        }
    }
}

/// A spectator's connection that another node's feed serves: what the table
/// queued for it on connecting (its snapshot, or what it missed), and then
/// it is let go. Whatever the table queued after that is in the feed too.
pub(super) async fn glimpse(mut connection: Connection, table: &TableHandle) -> Connected {
    let mut start = Vec::new();
    while let Ok(text) = connection.outbound.try_recv() {
        start.push(text.to_string());
    }
    let _ = table.send(TableCommand::Disconnect { connection: connection.id }).await;
    Connected { connection: connection.id, seat: None, glimpse: Some(start) }
}

/// Publishes what the table queues for a relayed connection, numbered, then
/// why it ended.
pub(super) async fn pump(bus: Bus, relay: String, connection: Connection, table: TableHandle, stop: CancellationToken) {
    let Connection { mut outbound, farewell, .. } = connection;
    let mut n = 0u64;
    loop {
        let next = tokio::select! {
            next = outbound.recv() => next,
            _ = stop.cancelled() => return,
        };
        n += 1;
        match next {
            Some(text) => {
                if bus.publish(relay.clone(), &frame(n, 'm', &text)).await.is_err() {
                    return;
                }
            }
            None => {
                let closed = tokio::time::timeout(Duration::from_millis(200), table.closed()).await.is_ok();
                let word = farewell_word(farewell.get().copied(), closed);
                let _ = bus.publish(relay, &frame(n, 'e', word)).await;
                return;
            }
        }
    }
}
