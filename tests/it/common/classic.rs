//! A classic-protocol client for the tests, built on
//! `mahjong::protocol::classic`: it speaks mj-server's lines over TCP as xmj
//! and mj-player do (escaped on the wire, reassembled on reading).

use std::net::SocketAddr;
use std::time::Duration;

use mahjong::protocol::classic::{ControllerMessage, WireLineDecoder, encode_wire};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// How long a test waits for one message before it fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// One classic connection.
pub struct ClassicClient {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    decoder: WireLineDecoder,
}

impl ClassicClient {
    /// Connects to a classic listener.
    pub async fn connect(addr: SocketAddr) -> ClassicClient {
        let stream = TcpStream::connect(addr).await.expect("connect to the classic listener");
        ClassicClient::over(stream)
    }

    /// Connects from another address of this machine (127.0.0.2, say:
    /// Linux routes all of 127.0.0.0/8 to the loopback interface).
    pub async fn connect_from(addr: SocketAddr, from: std::net::IpAddr) -> ClassicClient {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.bind(SocketAddr::new(from, 0)).expect("bind the local address");
        ClassicClient::over(socket.connect(addr).await.expect("connect to the classic listener"))
    }

    fn over(stream: TcpStream) -> ClassicClient {
        let (read, writer) = stream.into_split();
        ClassicClient { reader: BufReader::new(read), writer, decoder: WireLineDecoder::new() }
    }

    /// Sends one message line.
    pub async fn send(&mut self, line: &str) {
        self.writer.write_all(encode_wire(line).as_bytes()).await.expect("write to the server");
    }

    /// Sends raw bytes, as they are.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.expect("write to the server");
    }

    /// The next message line, or `None` once the server has closed the connection.
    pub async fn line(&mut self) -> Option<String> {
        loop {
            let mut physical = String::new();
            let read = tokio::time::timeout(WAIT, self.reader.read_line(&mut physical))
                .await
                .expect("a message from the server in time")
                .expect("read from the server");
            if read == 0 {
                return None;
            }
            if let Some(line) = self.decoder.push_line(&physical) {
                return Some(line);
            }
        }
    }

    /// The next message, parsed.
    pub async fn message(&mut self) -> ControllerMessage {
        let line = self.line().await.expect("the server closed the connection");
        ControllerMessage::parse(&line).unwrap_or_else(|e| panic!("the server sent an unreadable line {line:?}: {e}"))
    }

    /// Closes the connection.
    pub async fn close(mut self) {
        let _ = self.writer.shutdown().await;
    }
}

/// What a [`NaivePlayer`] did in a game.
#[derive(Debug, Default)]
pub struct NaiveLog {
    /// Discards made.
    pub discards: usize,
    /// Hands scored (its own `HandScore`s).
    pub hands_scored: usize,
    /// Errors the server sent it.
    pub errors: Vec<String>,
    /// The game ended (`GameOver`).
    pub game_over: bool,
    /// `StartPlay` messages received (mj-server's clients act only once
    /// told to start, at the first hand and after a reconnection).
    pub started: usize,
}

/// The simplest classic player: it never claims and never goes out; it
/// declares its bonus tiles, discards each tile it draws, says `Ready` when
/// asked, and shows its tiles when somebody else goes out. Enough to sit at
/// a table with robots who win the hands, through a whole game.
pub struct NaivePlayer {
    /// Its player id.
    pub id: i32,
    /// Ids in turn order from East, for the hand being played.
    order: Vec<i32>,
    /// Bonus tiles held and not yet declared.
    bonus: Vec<mahjong::rules::tile::Tile>,
    /// Draws seen in this hand's deal (53 make the deal).
    dealt: usize,
    /// Whose turn it is to declare, during the deal's declarations.
    declaring: Option<i32>,
    /// The last tile it drew.
    drawn: Option<mahjong::rules::tile::Tile>,
    /// Somebody went out and this player has not been scored yet.
    must_show: bool,
    /// Play has started (after the pause "to start play").
    playing: bool,
    /// Its `ShowTiles` was refused.
    refused: bool,
    /// As East, the `PlayerReady`s still awaited before play starts.
    waiting_for: usize,
}

impl NaivePlayer {
    /// A player with id `id` (from its `ConnectReply`).
    pub fn new(id: i32) -> NaivePlayer {
        NaivePlayer {
            id,
            order: Vec::new(),
            bonus: Vec::new(),
            dealt: 0,
            declaring: None,
            drawn: None,
            must_show: false,
            playing: false,
            refused: false,
            waiting_for: 0,
        }
    }

    /// Plays on `client` until the game is over, or (with `stop_after`)
    /// right after that many discards.
    pub async fn play(&mut self, client: &mut ClassicClient, stop_after: Option<usize>, log: &mut NaiveLog) {
        use ControllerMessage as C;
        loop {
            let Some(line) = client.line().await else { return };
            if std::env::var_os("CLASSIC_DEBUG").is_some() {
                eprintln!("{} < {line}", self.id);
            }
            let message = ControllerMessage::parse(&line).unwrap_or_else(|e| panic!("unreadable {line:?}: {e}"));
            match message {
                C::Game { east, south, west, north, .. } => self.order = vec![east, south, west, north],
                C::NewHand { east, .. } => {
                    let at = self.order.iter().position(|&i| i == east).unwrap_or(0);
                    self.order.rotate_left(at);
                    self.dealt = 0;
                    self.bonus.clear();
                    self.declaring = None;
                    self.must_show = false;
                    self.playing = false;
                    self.refused = false;
                }
                C::Pause { exempt, reason, .. } if reason == "to start play" => {
                    self.playing = true;
                    if exempt == self.id {
                        // East moves once the other three are ready.
                        self.waiting_for = 3;
                    } else {
                        client.send("Ready").await;
                    }
                }
                C::Pause { .. } => client.send("Ready").await,
                C::PlayerReady { .. } if self.waiting_for > 0 => {
                    self.waiting_for -= 1;
                    if self.waiting_for == 0 {
                        self.move_after_drawing(client, log).await;
                    }
                }
                C::PlayerDraws { id, tile } | C::PlayerDrawsLoose { id, tile } => {
                    self.dealt += 1;
                    if id == self.id {
                        let tile = tile.expect("a player sees its own draws");
                        if tile.is_bonus() {
                            self.bonus.push(tile);
                        }
                        self.drawn = Some(tile);
                    }
                    if self.dealt == 53 {
                        self.declaring = self.order.first().copied();
                    } else if self.dealt > 53 && !self.playing && id == self.id {
                        // A replacement while declaring: go on declaring.
                        self.declaring = Some(self.id);
                    }
                    if id == self.id && self.playing {
                        self.move_after_drawing(client, log).await;
                        if stop_after.is_some_and(|n| log.discards >= n) {
                            return;
                        }
                    }
                }
                C::PlayerDeclaresSpecial { id, tile: None } => {
                    let at = self.order.iter().position(|&i| i == id).unwrap_or(0);
                    self.declaring = self.order.get(at + 1).copied();
                }
                C::PlayerDiscards { id, discard, .. } if id != self.id => {
                    client.send(&format!("NoClaim {discard}")).await;
                }
                C::PlayerDeclaresClosedKong { id, discard, .. } | C::PlayerAddsToPung { id, discard, .. }
                    if id != self.id =>
                {
                    client.send(&format!("NoClaim {discard}")).await;
                }
                C::PlayerMahJongs { id, .. } if id != self.id => {
                    self.must_show = true;
                    client.send("ShowTiles").await;
                }
                C::HandScore { id, .. } if id == self.id => {
                    self.must_show = false;
                    log.hands_scored += 1;
                }
                // Showing may have been refused while the winner was still
                // declaring: show again once the winner is scored.
                C::HandScore { .. } if self.must_show && self.refused => {
                    self.refused = false;
                    client.send("ShowTiles").await;
                }
                C::Error { .. } if self.must_show && !self.refused => self.refused = true,
                C::Error { error, .. } => log.errors.push(error),
                C::GameOver => {
                    log.game_over = true;
                    return;
                }
                C::StartPlay { .. } => log.started += 1,
                _ => {}
            }
            // The deal's declarations, in turn from East.
            if self.dealt >= 53 && self.declaring == Some(self.id) {
                self.declaring = None;
                match self.bonus.pop() {
                    Some(tile) => client.send(&format!("DeclareSpecial {tile}")).await,
                    None => client.send("DeclareSpecial --").await,
                }
            }
        }
    }

    /// After a draw in play: a bonus tile is declared (a replacement
    /// follows), any other tile discarded.
    async fn move_after_drawing(&mut self, client: &mut ClassicClient, log: &mut NaiveLog) {
        let Some(tile) = self.drawn.take() else { return };
        if tile.is_bonus() {
            self.bonus.retain(|t| *t != tile);
            client.send(&format!("DeclareSpecial {tile}")).await;
        } else {
            client.send(&format!("Discard {tile} 0")).await;
            log.discards += 1;
        }
    }
}
