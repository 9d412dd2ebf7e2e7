//! One classic connection: the `Connect` handshake, then two translations
//! at once until either side ends. The player's lines become the table's
//! requests; the table's stream (the JSON a WebSocket would get) becomes
//! controller messages through a [`Printer`].

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::lines::{Incoming, MAX_LINE, MAX_MESSAGE, MessageReader};
use super::{Accepted, ClassicFront, Credential, Login, Refused, Seated};
use crate::limits::AddressKey;
use crate::protocol::classic::{ControllerMessage, MoveContext, PlayerMessage, PlayerOption, encode_wire};
use crate::protocol::printer::{PROTOCOL_VERSION, Printer, option_entry_named, option_list};
use crate::protocol::ws::{ClientMessage, Prompt, ServerMessage, StreamEvent, TableEvent, TableState};
use crate::rules::command::{Action, Claim};
use crate::table::{Asker, Connection, TableCommand};

/// A connection must say `Connect` within this time.
const HANDSHAKE: Duration = Duration::from_secs(30);

/// A write that takes longer than this drops the connection: a client that
/// does not read is not waited for (the table itself never waits: it drops
/// a subscriber whose queue is full).
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves one classic connection to its end.
pub async fn serve_connection<S>(io: S, peer: std::net::IpAddr, front: Arc<ClassicFront>)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (read, write) = tokio::io::split(io);
    let mut session = Session { input: MessageReader::new(read), writer: write, seqno: 0 };
    match tokio::time::timeout(HANDSHAKE, session.handshake(&front, peer)).await {
        Ok(Some(joined)) => session.play(joined).await,
        Ok(None) => {}
        Err(_) => {
            let _ = session.send(&refusal("no Connect message within 30 seconds")).await;
        }
    }
    let _ = session.writer.shutdown().await;
}

/// Tells a connection over a limit why it is refused, and closes it (a
/// client that does not read is not waited for).
pub(crate) async fn refuse(stream: Accepted, reason: String) {
    let wire = encode_wire(&refusal(&reason).to_string());
    let write = async {
        match stream {
            Accepted::Tcp(mut s) => {
                let _ = s.write_all(wire.as_bytes()).await;
                let _ = s.shutdown().await;
            }
            Accepted::Unix(mut s) => {
                let _ = s.write_all(wire.as_bytes()).await;
                let _ = s.shutdown().await;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), write).await;
}

/// Seated and subscribed.
struct Joined {
    seated: Seated,
    connection: Connection,
}

struct Session<R, W> {
    input: MessageReader<R>,
    writer: W,
    /// How many messages the client has sent (mj-server's `seqno` of errors).
    seqno: i32,
}

fn refusal(reason: &str) -> ControllerMessage {
    ControllerMessage::ConnectReply { pvers: PROTOCOL_VERSION, id: 0, reason: reason.to_string() }
}

fn error(seqno: i32, error: impl Into<String>) -> ControllerMessage {
    ControllerMessage::Error { seqno, error: error.into() }
}

impl<R, W> Session<R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    async fn send(&mut self, message: &ControllerMessage) -> std::io::Result<()> {
        let wire = encode_wire(&message.to_string());
        match tokio::time::timeout(WRITE_TIMEOUT, self.writer.write_all(wire.as_bytes())).await {
            Ok(done) => done,
            Err(_) => Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the client does not read")),
        }
    }

    async fn send_all(&mut self, messages: &[ControllerMessage]) -> std::io::Result<()> {
        for m in messages {
            self.send(m).await?;
        }
        Ok(())
    }

    async fn next(&mut self) -> Incoming {
        self.input.next().await
    }

    /// Waits for `Connect` and seats the player; `None` if the connection
    /// was refused or ended.
    async fn handshake(&mut self, front: &ClassicFront, peer: std::net::IpAddr) -> Option<Joined> {
        loop {
            let line = match self.next().await {
                Incoming::End => return None,
                Incoming::TooLong => {
                    self.seqno += 1;
                    let e = error(self.seqno, format!("line too long: a line is at most {MAX_LINE} bytes"));
                    self.send(&e).await.ok()?;
                    continue;
                }
                Incoming::Message(line) => line,
            };
            self.seqno += 1;
            let (pvers, last_id, name) = match PlayerMessage::parse(&line) {
                Ok(PlayerMessage::Connect { pvers, last_id, name }) => (pvers, last_id, name),
                Ok(other) => {
                    let e = error(self.seqno, format!("say Connect first, not {}", other.message_type()));
                    self.send(&e).await.ok()?;
                    continue;
                }
                Err(e) => {
                    self.send(&error(self.seqno, e.to_string())).await.ok()?;
                    continue;
                }
            };
            let refused = |reason: String| refusal(&reason);
            if pvers / 1000 != PROTOCOL_VERSION / 1000 {
                let _ = self.send(&refused("Protocol major version mismatch".into())).await;
                return None;
            }
            // `NAME@TABLE-ID` asks for a table. The name is read by the one
            // text policy (trimmed, invisible edges gone) before anything is
            // looked up by it, as every front-end reads names.
            let (name, table) = match name.rsplit_once('@') {
                Some((name, table)) => (name, Some(table.trim())),
                None => (name.as_str(), None),
            };
            if name.trim().is_empty() {
                let _ = self.send(&refused("A non-empty name must be given".into())).await;
                return None;
            }
            let name = match crate::text::player_name(name) {
                Ok(name) => name,
                Err(e) => {
                    let _ = self.send(&refused(e.to_string())).await;
                    return None;
                }
            };
            // Each login sits down or comes back, which the table stores:
            // paced per address, as a table WebSocket is.
            if let Err(refusal) =
                front.quotas().pace(&crate::limits::Client::guest(peer), crate::limits::Paced::ConnectionsOpened).await
            {
                let _ = self.send(&refused(refusal.message)).await;
                return None;
            }
            let seated = match front.seat_of_id(last_id).await {
                // A known id comes back to its seat, unless the seat is
                // connected (as mj-server: "already connected elsewhere"),
                // and only with the seat's credential.
                Some(seated) if last_id != 0 => self.come_back(front, peer, seated).await,
                // Any other id gets a new seat.
                _ => self.sit_down(front, peer, &name, table).await,
            };
            let seated = match seated {
                Ok(seated) => seated,
                Err(why) => {
                    let _ = self.send(&refused(why.0)).await;
                    return None;
                }
            };
            let token = seated.token.clone();
            let connection = seated
                .table
                .ask(|reply| TableCommand::Connect {
                    token: Some(token),
                    account: None,
                    since: None,
                    replay_hand: true,
                    reply,
                })
                .await
                .and_then(|r| r);
            let connection = match connection {
                Ok(c) => c,
                Err(e) => {
                    let _ = self.send(&refused(e.to_string())).await;
                    return None;
                }
            };
            let id = seated.base + i32::from(seated.seat) + 1;
            let reply = ControllerMessage::ConnectReply { pvers: PROTOCOL_VERSION, id, reason: String::new() };
            if self.send(&reply).await.is_err() {
                let _ = seated.table.send(TableCommand::Disconnect { connection: connection.id }).await;
                return None;
            }
            return Some(Joined { seated, connection });
        }
    }

    /// A new player: an account's name logs in with its password; a guest
    /// (whose name may not look like an account's or a robot's) gives a
    /// password too when the server asks guests for one.
    async fn sit_down(
        &mut self,
        front: &ClassicFront,
        peer: std::net::IpAddr,
        name: &str,
        table: Option<&str>,
    ) -> Result<Seated, Refused> {
        // A registered account's name needs its password (mj-server's
        // `--auth-basic`: AuthReqd, then AuthInfo with the password).
        let account = match front.login_needed(name).await? {
            Login::Guest => None,
            Login::Password => {
                let password = self.ask_password().await?;
                Some(front.log_in(peer, name, &password).await?)
            }
        };
        let guest_password = match account {
            None if front.asks_guests_for_passwords() => Some(self.ask_password().await?),
            _ => None,
        };
        front.seat(name, table, peer, account, guest_password.as_deref()).await
    }

    /// A client back with its player id: the seat must not be connected, and
    /// the client must show the seat's credential (an id alone is easily
    /// guessed).
    async fn come_back(
        &mut self,
        front: &ClassicFront,
        peer: std::net::IpAddr,
        seated: Seated,
    ) -> Result<Seated, Refused> {
        let info = seated.table.ask(|reply| TableCommand::Info { reply }).await;
        let connected = info.ok().and_then(|i| i.seats.get(usize::from(seated.seat)).map(|s| s.connected));
        if connected != Some(false) {
            return Err(Refused("Your id is already connected elsewhere".into()));
        }
        match &seated.credential {
            Credential::Account(account) => {
                let password = self.ask_password().await?;
                front.log_in_as(peer, *account, &password).await?;
            }
            Credential::Guest { password: Some(hash), .. } => {
                let password = self.ask_password().await?;
                let given = front.guest_password_hash(&password);
                // Compared in constant time: the hash is a secret's. Guesses
                // are limited as logins are.
                let seat = format!("classic seat {} of {}", seated.seat, seated.table.id);
                if !front.judge_guess(peer, &seat, same_hash(&given, hash)).await? {
                    return Err(Refused("Authentication failure".into()));
                }
            }
            Credential::Guest { address, password: None } => {
                if AddressKey::of(peer) != *address {
                    return Err(Refused(
                        "that id was played from another address: only its own address may take it back \
                         (connect with id 0 for a new seat)"
                            .into(),
                    ));
                }
            }
        }
        Ok(seated)
    }

    /// Asks for a password (`AuthReqd basic`) and reads the answer.
    async fn ask_password(&mut self) -> Result<String, Refused> {
        let ask = ControllerMessage::AuthReqd { authtype: "basic".into(), authdata: String::new() };
        self.send(&ask).await.map_err(|e| Refused(e.to_string()))?;
        let line = match self.next().await {
            Incoming::Message(line) => line,
            Incoming::TooLong => return Err(Refused("line too long".into())),
            Incoming::End => return Err(Refused("the connection ended".into())),
        };
        self.seqno += 1;
        match PlayerMessage::parse(&line) {
            Ok(PlayerMessage::AuthInfo { authtype, authdata }) if authtype == "basic" => Ok(authdata),
            Ok(PlayerMessage::AuthInfo { authtype, .. }) => {
                Err(Refused(format!("unknown authentication type {authtype}: only basic")))
            }
            _ => Err(Refused("expected AuthInfo basic PASSWORD".into())),
        }
    }

    /// Plays until the client leaves, the table drops the connection, or a
    /// write fails.
    async fn play(&mut self, joined: Joined) {
        let Joined { seated, mut connection } = joined;
        let table = seated.table.clone();
        let mut seat = Seat {
            printer: Printer::new(seated.base, seated.seat),
            prompt: None,
            answered: None,
            resuming: false,
            table: table.clone(),
        };
        let connection_id = connection.id;
        loop {
            tokio::select! {
                // The table's messages first, so that what the client answers
                // has been printed before its answer is read.
                biased;
                out = connection.outbound.recv() => {
                    let Some(text) = out else {
                        // The table dropped this connection (it fell behind, or
                        // another connection took the seat).
                        break;
                    };
                    let messages = match serde_json::from_str::<ServerMessage>(&text) {
                        Ok(message) => seat.server_message(message, self.seqno).await,
                        Err(e) => {
                            tracing::error!("classic session: unreadable table message: {e}");
                            Vec::new()
                        }
                    };
                    if self.send_all(&messages).await.is_err() { break }
                }
                incoming = self.input.next() => {
                    let line = match incoming {
                        Incoming::End => break,
                        Incoming::TooLong => {
                            self.seqno += 1;
                            let e = error(self.seqno, format!("line too long: a line is at most {MAX_LINE} bytes, a message {MAX_MESSAGE}"));
                            if self.send(&e).await.is_err() { break }
                            continue;
                        }
                        Incoming::Message(line) => line,
                    };
                    self.seqno += 1;
                    let answer = match PlayerMessage::parse(&line) {
                        Ok(message) => seat.request(message, connection_id).await,
                        Err(e) => Answer::Reply(vec![error(self.seqno, e.to_string())]),
                    };
                    match answer {
                        Answer::Reply(messages) => {
                            let messages: Vec<_> = messages.into_iter().map(|m| match m {
                                ControllerMessage::Error { error, .. } => ControllerMessage::Error { seqno: self.seqno, error },
                                m => m,
                            }).collect();
                            if self.send_all(&messages).await.is_err() { break }
                        }
                        Answer::Close => break,
                    }
                }
            }
        }
        let _ = table.send(TableCommand::Disconnect { connection: connection_id }).await;
        // Gone before the game started: the seat is freed, as mj-server
        // forgets a player who leaves before its game (otherwise the table
        // would wait for it for ever).
        let open = table.ask(|reply| TableCommand::Info { reply }).await.is_ok_and(|i| i.state == TableState::Open);
        if open {
            let asker = Asker { token: Some(seated.token.clone()), ..Asker::default() };
            let _ = table.ask(|reply| TableCommand::Leave { asker, reply }).await;
        }
    }
}

/// Whether two hashes are equal, looking at every byte whatever the first
/// difference (so that the time taken tells nothing).
fn same_hash(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What to do with a player's message.
enum Answer {
    /// Send these to the client (possibly nothing).
    Reply(Vec<ControllerMessage>),
    /// End the connection.
    Close,
}

/// The player's seat as the session sees it.
struct Seat {
    printer: Printer,
    /// The table's last prompt: what the player may do now.
    prompt: Option<Prompt>,
    /// The last pause this player said `Ready` to.
    answered: Option<u64>,
    /// Back in a game under way: once the hand so far has been told again
    /// (the table's first prompt follows it), `StartPlay` lets the client
    /// act, as mj-server ends a resumption (its clients keep a game
    /// inactive until they are told to start).
    resuming: bool,
    table: crate::table::TableHandle,
}

impl Seat {
    async fn tell(&self, connection: u64, message: ClientMessage) -> Answer {
        if self.table.send(TableCommand::Message { connection, message }).await.is_err() {
            return Answer::Close;
        }
        Answer::Reply(Vec::new())
    }

    async fn options(&self) -> Option<crate::rules::options::GameOptions> {
        self.table.ask(|reply| TableCommand::Options { reply }).await.ok()
    }

    /// A player's message: a move, a request to the table, or a question
    /// answered here.
    async fn request(&mut self, message: PlayerMessage, connection: u64) -> Answer {
        use PlayerMessage as P;
        let reply = |m: ControllerMessage| Answer::Reply(vec![m]);
        let refuse = |why: &str| Answer::Reply(vec![error(0, why)]);
        match message {
            P::Connect { .. } => refuse("You already have a player ID"),
            P::Disconnect => Answer::Close,
            P::Ready => {
                // mj-server ignores a Ready nobody waits for, or said twice
                // (mj-player often says it twice). Judged by the pauses
                // printed (the prompt saying so may still be on its way).
                let awaited = self.printer.awaited_ready();
                if awaited.is_some() && awaited != self.answered {
                    self.answered = awaited;
                    self.tell(connection, ClientMessage::Ready).await
                } else {
                    Answer::Reply(Vec::new())
                }
            }
            P::RequestPause { reason } => self.tell(connection, ClientMessage::RequestPause { reason }).await,
            P::SendMessage { text, .. } => self.tell(connection, ClientMessage::Chat { text }).await,
            P::SetGameOption { optname, optvalue } => {
                let message = ClientMessage::SetOption { name: optname, value: optvalue.trim().into() };
                self.tell(connection, message).await
            }
            P::ListGameOptions { .. } => match self.options().await {
                Some(options) => Answer::Reply(option_list(&options)),
                None => Answer::Close,
            },
            P::QueryGameOption { optname } => {
                let Some(options) = self.options().await else { return Answer::Close };
                match options.get(&optname).ok().and_then(|v| option_entry_named(&optname, &v.raw())) {
                    Some(optentry) => reply(ControllerMessage::GameOption { id: 0, optentry }),
                    None => refuse(&format!("unknown game option {optname}")),
                }
            }
            P::QueryMahJong { tile } => {
                let actions = self.prompt.as_ref().map_or(&[][..], |p| &p.actions[..]);
                let answer = match tile {
                    None => actions.contains(&Action::MahJong),
                    Some(t) => {
                        self.prompt.as_ref().and_then(|p| p.claimable.as_ref()).is_some_and(|c| c.tile == t)
                            && actions.iter().any(|a| matches!(a, Action::Claim { claim: Claim::MahJong, .. }))
                    }
                };
                reply(ControllerMessage::CanMahJong { tile, answer })
            }
            P::SetPlayerOption { option, ack, value, text } => {
                let set = ControllerMessage::PlayerOptionSet { option, ack: true, value, text: text.clone() };
                match option {
                    PlayerOption::DelayTime if value < 0 => refuse("Bad value for DelayTime"),
                    PlayerOption::DelayTime => {
                        let deciseconds = value.clamp(0, 50) as u32;
                        if self
                            .table
                            .send(TableCommand::Message {
                                connection,
                                message: ClientMessage::SetPause { deciseconds },
                            })
                            .await
                            .is_err()
                        {
                            return Answer::Close;
                        }
                        if ack { Answer::Reply(Vec::new()) } else { reply(set) }
                    }
                    PlayerOption::InfoTiles if !(0..=1).contains(&value) => refuse("Bad value for InfoTiles"),
                    // This server always times claims itself: a request for
                    // local timeouts is not granted (mj-server grants it only
                    // when all four ask), and dropping them is granted.
                    PlayerOption::LocalTimeouts if ack || value != 0 => Answer::Reply(Vec::new()),
                    PlayerOption::Unknown => refuse("Unknown option"),
                    _ if ack => Answer::Reply(Vec::new()),
                    _ => reply(set),
                }
            }
            P::SaveState { .. } | P::LoadState { .. } => {
                refuse("games are stored as they are played; saving and loading state is not supported")
            }
            P::AuthInfo { .. } => refuse("no authentication was asked for"),
            P::NewAuthInfo { .. } => refuse("Password changing not supported"),
            P::RequestReconnect => refuse("reconnect by connecting again with your id"),
            P::ChangeManager { manager } => {
                // An id of this table's, or 0 for nobody (as mj-server).
                let seat = match manager {
                    0 => None,
                    id => match id.checked_sub(self.printer.id(0)).map(u8::try_from) {
                        Some(Ok(seat)) if seat < 4 => Some(seat),
                        _ => return refuse(&format!("no player {id} at this table")),
                    },
                };
                self.tell(connection, ClientMessage::SetManager { seat }).await
            }
            P::DeclareWashOut => refuse("a hand cannot be declared washed out"),
            P::SwapTile { .. } => refuse("Debugging not enabled"),
            move_message => match self.action(&move_message) {
                Some(action) => self.tell(connection, ClientMessage::Act { action }).await,
                None => refuse("not a move"),
            },
        }
    }

    /// The move a classic message means now. mj-server reads `Chow`, `Pung`
    /// and `MahJong` by the state of the hand; the serial they carry says it
    /// as well, since a discard's serial is never 0: with a serial they claim
    /// (or, for a chow granted without a position, say the position), and
    /// with 0 they use the Mah-Jong discard or go out on one's own draw.
    fn action(&self, message: &PlayerMessage) -> Option<Action> {
        let serial = match message {
            PlayerMessage::Chow { discard, .. }
            | PlayerMessage::Pung { discard }
            | PlayerMessage::MahJong { discard } => Some(*discard),
            _ => None,
        };
        message.to_action(MoveContext {
            mah_jonging: serial == Some(0),
            chow_position_pending: self.printer.chow_position_pending(),
            claim_window_open: serial.is_some_and(|d| d != 0),
        })
    }

    /// A message of the table's stream, printed for the classic client.
    async fn server_message(&mut self, message: ServerMessage, seqno: i32) -> Vec<ControllerMessage> {
        match message {
            ServerMessage::Snapshot { seat, table, game, .. } => {
                let mut out: Vec<ControllerMessage> = table
                    .seats
                    .iter()
                    .filter(|s| Some(s.seat) != seat)
                    .filter_map(|s| {
                        let name = s.name.clone()?;
                        Some(ControllerMessage::Player { id: self.printer.id(s.seat), name })
                    })
                    .collect();
                if let Some(view) = game {
                    // Back in a game under way: the seating, the scores and
                    // the options, as mj-server tells a player who reconnects.
                    self.printer.game_announced();
                    if let Some(hand) = &view.hand {
                        self.printer.set_east(hand.east.0);
                    }
                    out.push(self.printer.game_message(view.round, view.scores, table.manager));
                    out.extend(option_list(&view.options));
                    self.resuming = !view.game_over;
                    // Waiting for players to say ready: the pause too.
                    if !table.waiting_for_ready.is_empty() {
                        let waiting = TableEvent::WaitingForReady { seats: table.waiting_for_ready.clone() };
                        out.extend(self.printer.event(&StreamEvent::Table(waiting)));
                    }
                }
                out
            }
            ServerMessage::Event { event: StreamEvent::Table(TableEvent::GameStarted), .. } => {
                let options = self.options().await.unwrap_or_default();
                let manager = match self.table.ask(|reply| TableCommand::Info { reply }).await {
                    Ok(info) => info.manager,
                    Err(_) => None,
                };
                self.printer.game_announced();
                let mut out = vec![self.printer.game_message(crate::rules::tile::Wind::East, [0; 4], manager)];
                out.extend(option_list(&options));
                out
            }
            ServerMessage::Event { event, .. } => self.printer.event(&event),
            ServerMessage::Prompt(prompt) => {
                self.prompt = Some(prompt);
                if std::mem::take(&mut self.resuming) {
                    // 0: whoever is to act acts (the clients look at the
                    // game's state), as mj-server says when claims are open.
                    return vec![ControllerMessage::StartPlay { id: 0 }];
                }
                Vec::new()
            }
            ServerMessage::Error { message, .. } => vec![error(seqno, message)],
            ServerMessage::Pong => Vec::new(),
        }
    }
}
