//! A small client of the server's own API: JSON over HTTP/1.1 for the lobby,
//! and the table WebSocket. The integration tests, the load tool and the
//! command-line player use it; it speaks only the public protocol.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

use crate::bots::{Robot, Strategy};
use crate::protocol::ws::{ClientMessage, ServerMessage, StreamEvent, TableEvent};

/// What went wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The connection failed.
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    /// The WebSocket failed.
    #[error("websocket: {0}")]
    Ws(#[from] tokio_tungstenite::tungstenite::Error),
    /// The server's answer could not be read.
    #[error("bad answer: {0}")]
    Answer(String),
    /// Waited too long.
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
}

/// An HTTP answer: the status and the JSON body (`Null` when empty).
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status code.
    pub status: u16,
    /// The body.
    pub body: Value,
}

/// Sends one HTTP/1.1 request (`Connection: close`) with an optional JSON
/// body and seat token; returns the status and JSON body.
pub async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    token: Option<&str>,
) -> Result<Answer, ClientError> {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(t) = token {
        request.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if !body.is_empty() {
        request.push_str("Content-Type: application/json\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    http_raw(addr, request.as_bytes()).await
}

/// Sends raw bytes as a request and reads the answer (for testing bad requests).
pub async fn http_raw(addr: SocketAddr, request: &[u8]) -> Result<Answer, ClientError> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(request).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let text = String::from_utf8_lossy(&raw);
    let (head, rest) = text.split_once("\r\n\r\n").ok_or_else(|| ClientError::Answer(text.to_string()))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ClientError::Answer(head.to_string()))?;
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    let body_text = if chunked { dechunk(rest) } else { rest.to_string() };
    let body = if body_text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&body_text).unwrap_or(Value::String(body_text))
    };
    Ok(Answer { status, body })
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || tail.len() < n {
            break;
        }
        out.push_str(&tail[..n]);
        rest = tail[n..].trim_start_matches("\r\n");
    }
    out
}

/// A WebSocket to a table.
pub struct TableSocket {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The last sequence number received.
    pub last_seq: u64,
}

impl TableSocket {
    /// Connects to a table, as a player (with a token) or a spectator.
    pub async fn connect(
        addr: SocketAddr,
        table: &str,
        token: Option<&str>,
        since: Option<u64>,
    ) -> Result<TableSocket, ClientError> {
        let mut url = format!("ws://{addr}/api/v1/tables/{table}/ws");
        let mut query = Vec::new();
        if let Some(t) = token {
            query.push(format!("token={t}"));
        }
        if let Some(s) = since {
            query.push(format!("since={s}"));
        }
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query.join("&"));
        }
        let (socket, _) = connect_async(url).await?;
        Ok(TableSocket { socket, last_seq: since.unwrap_or(0) })
    }

    /// Sends a message.
    pub async fn send(&mut self, message: &ClientMessage) -> Result<(), ClientError> {
        let text = serde_json::to_string(message).map_err(|e| ClientError::Answer(e.to_string()))?;
        self.send_text(text).await
    }

    /// Sends raw text (for testing bad messages).
    pub async fn send_text(&mut self, text: String) -> Result<(), ClientError> {
        self.socket.send(Message::text(text)).await?;
        Ok(())
    }

    /// The next message from the server, or `None` when the socket closed.
    /// Pings are answered by the WebSocket layer and skipped.
    pub async fn next(&mut self, wait: Duration) -> Result<Option<(ServerMessage, String)>, ClientError> {
        loop {
            let frame = match tokio::time::timeout(wait, self.socket.next()).await {
                Err(_) => return Err(ClientError::Timeout("a message from the server")),
                Ok(None) => return Ok(None),
                Ok(Some(frame)) => frame?,
            };
            match frame {
                Message::Text(text) => {
                    let message: ServerMessage = serde_json::from_str(&text)
                        .map_err(|e| ClientError::Answer(format!("{e}: {}", text.as_str())))?;
                    if let ServerMessage::Event { seq, .. } = &message {
                        self.last_seq = *seq;
                    }
                    return Ok(Some((message, text.to_string())));
                }
                Message::Close(_) => return Ok(None),
                _ => continue,
            }
        }
    }

    /// Closes the socket.
    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
    }
}

/// What [`play_seat`] saw.
#[derive(Debug, Default, Clone)]
pub struct SeatLog {
    /// Every message received, as text.
    pub received: Vec<String>,
    /// The moves made.
    pub moves: usize,
    /// Errors the server sent back.
    pub errors: Vec<String>,
    /// The game ended.
    pub game_over: bool,
    /// Hands that ended (settled or washed out).
    pub hands_ended: u32,
}

/// How [`play_seat`] plays.
#[derive(Debug, Clone, Copy)]
pub struct SeatPlan {
    /// The seat played.
    pub seat: u8,
    /// The robot judgement used.
    pub strategy: Strategy,
    /// How long the stream must be quiet before asking for a snapshot.
    pub quiet: Duration,
    /// Stop after this many hands have ended.
    pub max_hands: Option<u32>,
    /// Stop after making this many moves.
    pub max_moves: Option<usize>,
}

impl SeatPlan {
    /// Plays `seat` with the default robot until the game is over.
    pub fn new(seat: u8) -> SeatPlan {
        SeatPlan {
            seat,
            strategy: Strategy::default(),
            quiet: Duration::from_millis(40),
            max_hands: None,
            max_moves: None,
        }
    }
}

/// Plays a seat through the WebSocket with a robot's judgement: whenever the
/// stream goes quiet for a while, it asks for a snapshot, and if the snapshot
/// shows a decision due, the robot makes it; it says `ready` when asked.
/// Stops when the game is over, or as the plan says.
pub async fn play_seat(socket: &mut TableSocket, plan: SeatPlan) -> Result<SeatLog, ClientError> {
    let mut log = SeatLog::default();
    play_seat_into(socket, plan, &mut log).await?;
    Ok(log)
}

/// [`play_seat`], keeping what it saw in `log` even when it fails (a client
/// whose server went away still has what it received).
pub async fn play_seat_into(socket: &mut TableSocket, plan: SeatPlan, log: &mut SeatLog) -> Result<(), ClientError> {
    let SeatPlan { seat, strategy, quiet, max_hands, max_moves } = plan;
    let mut robot: Option<Robot> = None;
    let mut asked = false;
    // `ready` is said once per wait: both a snapshot and an event may ask.
    let mut ready_sent = false;
    loop {
        let next = match socket.next(quiet).await {
            Ok(Some(m)) => Some(m),
            Ok(None) => return Err(ClientError::Answer("the server closed the socket".into())),
            Err(ClientError::Timeout(_)) => None,
            Err(e) => return Err(e),
        };
        let Some((message, text)) = next else {
            if !asked {
                socket.send(&ClientMessage::Snapshot).await?;
                asked = true;
            }
            continue;
        };
        log.received.push(text);
        match message {
            ServerMessage::Snapshot { table, .. } if table.waiting_for_ready.contains(&seat) => {
                asked = false;
                if !ready_sent {
                    socket.send(&ClientMessage::Ready).await?;
                    ready_sent = true;
                }
            }
            // Nothing may be done while the table is paused or waits for others.
            ServerMessage::Snapshot { table, .. } if table.paused || !table.waiting_for_ready.is_empty() => {
                asked = false;
            }
            ServerMessage::Snapshot { game: Some(view), .. } => {
                asked = false;
                // Not waited for: any earlier wait is over (a table resumed
                // after a restart deals no hand and announces no pause).
                ready_sent = false;
                let r = robot.get_or_insert_with(|| Robot::new(strategy, view.options.clone()));
                if view.hand.as_ref().is_some_and(|h| h.my_decision.is_some())
                    && let Some(action) = r.decide(&view)
                {
                    socket.send(&ClientMessage::Act { action }).await?;
                    log.moves += 1;
                    if max_moves.is_some_and(|m| log.moves >= m) {
                        return Ok(());
                    }
                }
            }
            ServerMessage::Snapshot { .. } => asked = false,
            ServerMessage::Event { event, .. } => match event {
                StreamEvent::Table(TableEvent::WaitingForReady { seats }) if seats.contains(&seat) && !ready_sent => {
                    socket.send(&ClientMessage::Ready).await?;
                    ready_sent = true;
                }
                StreamEvent::Game(crate::rules::event::Event::HandStarted { .. })
                | StreamEvent::Table(TableEvent::Paused { .. } | TableEvent::Resumed) => ready_sent = false,
                StreamEvent::Table(TableEvent::OptionChanged { .. }) => robot = None,
                StreamEvent::Game(crate::rules::event::Event::GameOver { .. }) => {
                    log.game_over = true;
                    return Ok(());
                }
                StreamEvent::Game(
                    crate::rules::event::Event::Settled { .. } | crate::rules::event::Event::WashedOut { .. },
                ) => {
                    log.hands_ended += 1;
                    if max_hands.is_some_and(|m| log.hands_ended >= m) {
                        return Ok(());
                    }
                }
                _ => {}
            },
            ServerMessage::Error { code, message } => log.errors.push(format!("{code}: {message}")),
            ServerMessage::Pong => {}
        }
    }
}
