//! A small client of the server's own API: JSON over HTTP/1.1 for the lobby
//! (hyper's client), raw requests for testing malformed ones, the table
//! WebSocket, and a seat player that plays from the server's prompts alone. The integration
//! tests and the load tool use it; it speaks only the public protocol.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Method, Request, header};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

use mahjong::protocol::ws::{ClientMessage, Prompt, ServerMessage, StreamEvent};
use mahjong::rules::command::{Action, Claim};
use mahjong::rules::event::Event;

/// What went wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The connection failed.
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    /// The HTTP exchange failed.
    #[error("http: {0}")]
    Http(#[from] hyper::Error),
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

/// An HTTP answer: the status and the JSON body (`Null` when empty, a string
/// when not JSON).
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status code.
    pub status: u16,
    /// The body.
    pub body: Value,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
}

impl Answer {
    /// The first value of a header (`name` in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Sends one HTTP/1.1 request, on a connection of its own, with an optional
/// JSON body and seat token; returns the status and JSON body.
pub async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    token: Option<&str>,
) -> Result<Answer, ClientError> {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("authorization", b.as_str())).collect();
    request(addr, method, path, body, &headers).await
}

/// As [`http`], with any headers (a cookie, `X-Requested-With`...).
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    headers: &[(&str, &str)],
) -> Result<Answer, ClientError> {
    request_from(None, addr, method, path, body, headers).await
}

/// As [`request`], from the local address `from` (another address of the
/// loopback network, say) if given.
pub async fn request_from(
    from: Option<std::net::IpAddr>,
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&Value>,
    headers: &[(&str, &str)],
) -> Result<Answer, ClientError> {
    let method = Method::from_bytes(method.as_bytes()).map_err(|e| ClientError::Answer(format!("{method}: {e}")))?;
    let mut request = Request::builder().method(method).uri(path).header(header::HOST, addr.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = match body {
        Some(b) => {
            request = request.header(header::CONTENT_TYPE, "application/json");
            Bytes::from(b.to_string())
        }
        None => Bytes::new(),
    };
    let request = request.body(Full::new(body)).map_err(|e| ClientError::Answer(format!("{path}: {e}")))?;
    let stream = match from {
        None => TcpStream::connect(addr).await?,
        Some(ip) => {
            let socket = if ip.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
            socket.bind(SocketAddr::new(ip, 0))?;
            socket.connect(addr).await?
        }
    };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    // The connection is driven until the answer is read and the sender dropped.
    tokio::spawn(connection);
    let response = sender.send_request(request).await?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let body = response.into_body().collect().await?.to_bytes();
    Ok(Answer { status, body: body_value(&body), headers })
}

/// Sends raw bytes as a request and reads the answer, for testing malformed
/// requests: nothing checks or completes what is sent. The answer is read as
/// its head says (`Content-Length`, chunked, or until the server closes).
pub async fn http_raw(addr: SocketAddr, request: &[u8]) -> Result<Answer, ClientError> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(request).await?;
    let mut raw = Vec::new();
    let mut buffer = [0; 8192];
    loop {
        let n = stream.read(&mut buffer).await?;
        raw.extend_from_slice(&buffer[..n]);
        if let Some(answer) = read_answer(&raw, n == 0)? {
            return Ok(answer);
        }
    }
}

/// The answer in `raw`, once it is whole (`None` while more is to come);
/// `closed` says the server has closed the connection.
fn read_answer(raw: &[u8], closed: bool) -> Result<Option<Answer>, ClientError> {
    let bad = |why: String| ClientError::Answer(format!("{why}: {}", String::from_utf8_lossy(raw)));
    let mut rest = raw;
    // Interim answers (`100 Continue`) come before the real one.
    let (status, head_len, framing, headers) = loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut headers);
        let head_len = match response.parse(rest) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) if closed => return Err(bad("the answer ended in its head".into())),
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(bad(format!("not an HTTP answer ({e})"))),
        };
        let status = response.code.unwrap_or_default();
        if (100..200).contains(&status) {
            rest = &rest[head_len..];
            continue;
        }
        let framing = Framing::of(status, response.headers).map_err(bad)?;
        let headers = response
            .headers
            .iter()
            .map(|h| (h.name.to_ascii_lowercase(), String::from_utf8_lossy(h.value).into_owned()))
            .collect::<Vec<_>>();
        break (status, head_len, framing, headers);
    };
    let after_head = &rest[head_len..];
    let body = match framing {
        Framing::Empty => Vec::new(),
        Framing::Length(n) if after_head.len() >= n => after_head[..n].to_vec(),
        Framing::Length(n) if closed => return Err(bad(format!("the body ended before its {n} bytes"))),
        Framing::Length(_) => return Ok(None),
        Framing::Chunked => match dechunk(after_head).map_err(bad)? {
            Some(body) => body,
            None if closed => return Err(bad("the body ended in a chunk".into())),
            None => return Ok(None),
        },
        Framing::UntilClosed if closed => after_head.to_vec(),
        Framing::UntilClosed => return Ok(None),
    };
    Ok(Some(Answer { status, body: body_value(&body), headers }))
}

/// How an answer's body is delimited (RFC 9112, 6.3).
enum Framing {
    Empty,
    Length(usize),
    Chunked,
    UntilClosed,
}

impl Framing {
    fn of(status: u16, headers: &[httparse::Header<'_>]) -> Result<Framing, String> {
        if status == 204 || status == 304 {
            return Ok(Framing::Empty);
        }
        let value = |name: &str| {
            headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| String::from_utf8_lossy(h.value))
        };
        if let Some(coding) = value("transfer-encoding") {
            return if coding.rsplit(',').next().is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked")) {
                Ok(Framing::Chunked)
            } else {
                Ok(Framing::UntilClosed)
            };
        }
        match value("content-length") {
            Some(n) => n.trim().parse().map(Framing::Length).map_err(|_| format!("Content-Length {n:?}")),
            None => Ok(Framing::UntilClosed),
        }
    }
}

/// A chunked body decoded, or `None` while its last chunk has not come.
fn dechunk(mut data: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut body = Vec::new();
    loop {
        let (start, size) = match httparse::parse_chunk_size(data) {
            Ok(httparse::Status::Complete(found)) => found,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err("a bad chunk size".into()),
        };
        let chunk = &data[start..];
        if size == 0 {
            // The end: trailer fields, if any, then an empty line.
            let whole = chunk.starts_with(b"\r\n") || chunk.windows(4).any(|w| w == b"\r\n\r\n");
            return Ok(whole.then_some(body));
        }
        let size = usize::try_from(size).map_err(|_| "a chunk too large".to_string())?;
        if chunk.len() < size.saturating_add(2) {
            return Ok(None);
        }
        if &chunk[size..size + 2] != b"\r\n" {
            return Err("a chunk longer than its size".into());
        }
        body.extend_from_slice(&chunk[..size]);
        data = &chunk[size + 2..];
    }
}

/// A body as JSON: `Null` when empty, a string when it is not JSON.
fn body_value(body: &[u8]) -> Value {
    if body.trim_ascii().is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
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
        TableSocket::connect_with(addr, table, token, since, &[]).await
    }

    /// As [`TableSocket::connect`], with headers on the upgrade request (an
    /// account's `Authorization` or cookie).
    pub async fn connect_with(
        addr: SocketAddr,
        table: &str,
        token: Option<&str>,
        since: Option<u64>,
        headers: &[(&str, &str)],
    ) -> Result<TableSocket, ClientError> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
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
        let mut request = url.into_client_request()?;
        for (name, value) in headers {
            let name = tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::Answer(format!("header {name}: {e}")))?;
            let value = tokio_tungstenite::tungstenite::http::HeaderValue::from_str(value)
                .map_err(|e| ClientError::Answer(format!("header value: {e}")))?;
            request.headers_mut().append(name, value);
        }
        let (socket, _) = connect_async(request).await?;
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
    /// Pings are answered by the WebSocket layer and skipped (they do not
    /// restart the wait: a server that only pings times the wait out).
    pub async fn next(&mut self, wait: Duration) -> Result<Option<(ServerMessage, String)>, ClientError> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let frame = match tokio::time::timeout_at(deadline, self.socket.next()).await {
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

    /// Reads until the server closes the socket; the close frame's code
    /// (`None` if it closed without one).
    pub async fn close_code(&mut self, wait: Duration) -> Result<Option<u16>, ClientError> {
        loop {
            let frame = match tokio::time::timeout(wait, self.socket.next()).await {
                Err(_) => return Err(ClientError::Timeout("the server to close the socket")),
                Ok(None) => return Ok(None),
                Ok(Some(frame)) => frame?,
            };
            if let Message::Close(frame) = frame {
                return Ok(frame.map(|f| u16::from(f.code)));
            }
        }
    }

    /// Closes the socket: a close frame if it can be sent within 10 s (a
    /// peer that reads nothing could hold the send for ever), then the
    /// connection is dropped either way.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.socket.close(None)).await;
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
    /// Stop after this many hands have ended.
    pub max_hands: Option<u32>,
    /// Stop after making this many moves.
    pub max_moves: Option<usize>,
}

impl SeatPlan {
    /// Plays `seat` until the game is over.
    pub fn new(seat: u8) -> SeatPlan {
        SeatPlan { seat, max_hands: None, max_moves: None }
    }
}

/// Plays a seat through the WebSocket from the server's prompts alone, as
/// any client may: it never asks for a snapshot. It says `ready` when the
/// prompt asks, and when the prompt lists moves it makes one of them by a
/// fixed preference (going out, declaring bonus tiles, punging, passing,
/// discarding the tile just drawn, declaring and showing after Mah-Jong),
/// so that the same prompts give the same moves. Stops when the game is
/// over, or as the plan says.
pub async fn play_seat(socket: &mut TableSocket, plan: SeatPlan) -> Result<SeatLog, ClientError> {
    let mut log = SeatLog::default();
    play_seat_into(socket, plan, &mut log).await?;
    Ok(log)
}

/// How long [`play_seat`] waits for the next message before giving up.
const PLAY_WAIT: Duration = Duration::from_secs(120);

/// [`play_seat`], keeping what it saw in `log` even when it fails (a client
/// whose server went away still has what it received).
pub async fn play_seat_into(socket: &mut TableSocket, plan: SeatPlan, log: &mut SeatLog) -> Result<(), ClientError> {
    let SeatPlan { max_hands, max_moves, .. } = plan;
    loop {
        let Some((message, text)) = socket.next(PLAY_WAIT).await? else {
            return Err(ClientError::Answer("the server closed the socket".into()));
        };
        log.received.push(text);
        match message {
            ServerMessage::Prompt(prompt) if prompt.ready => socket.send(&ClientMessage::Ready).await?,
            ServerMessage::Prompt(prompt) => {
                let Some(action) = preferred(&prompt) else { continue };
                socket.send(&ClientMessage::Act { action }).await?;
                log.moves += 1;
                if max_moves.is_some_and(|m| log.moves >= m) {
                    return Ok(());
                }
            }
            ServerMessage::Event { event, .. } => match event {
                StreamEvent::Game(Event::GameOver { .. }) => {
                    log.game_over = true;
                    return Ok(());
                }
                StreamEvent::Game(Event::Settled { .. } | Event::WashedOut { .. }) => {
                    log.hands_ended += 1;
                    if max_hands.is_some_and(|m| log.hands_ended >= m) {
                        return Ok(());
                    }
                }
                _ => {}
            },
            ServerMessage::Error { code, message } => log.errors.push(format!("{code}: {message}")),
            ServerMessage::Snapshot { .. } | ServerMessage::Pong => {}
        }
    }
}

/// The move [`play_seat`] makes from a prompt's list, by a fixed preference.
pub fn preferred(prompt: &Prompt) -> Option<Action> {
    let actions = &prompt.actions;
    let first = |wanted: &dyn Fn(&Action) -> bool| actions.iter().find(|a| wanted(a)).cloned();
    let drawn_discard = prompt.drawn.map(|tile| Action::Discard { tile, calling: false });
    first(&|a| matches!(a, Action::MahJong | Action::Claim { claim: Claim::MahJong, .. }))
        .or_else(|| first(&|a| matches!(a, Action::DeclareBonus { .. })))
        .or_else(|| first(&|a| matches!(a, Action::Claim { claim: Claim::Pung, .. })))
        .or_else(|| first(&|a| matches!(a, Action::Pass { .. } | Action::FinishDeclaring | Action::ShowTiles)))
        .or_else(|| first(&|a| matches!(a, Action::ChooseSwap { lots: 0 })))
        .or_else(|| drawn_discard.filter(|d| actions.contains(d)))
        .or_else(|| first(&|a| matches!(a, Action::Discard { calling: false, .. })))
        .or_else(|| actions.first().cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer read from `raw` delivered in pieces of `step` bytes, and
    /// how many bytes it took.
    fn read_in_pieces(raw: &[u8], step: usize) -> (Answer, usize) {
        let mut at = 0;
        loop {
            at = (at + step).min(raw.len());
            if let Some(answer) = read_answer(&raw[..at], false).expect("a good answer") {
                return (answer, at);
            }
            assert!(at < raw.len(), "the whole answer was not enough");
        }
    }

    #[test]
    fn an_answer_is_whole_once_its_content_length_has_come() {
        let raw = b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n{\"id\":1}\nXX";
        let (answer, read) = read_in_pieces(raw, 1);
        assert_eq!((answer.status, answer.body), (201, serde_json::json!({"id": 1})));
        assert_eq!(read, raw.len() - 2, "nothing beyond the body is waited for");
    }

    #[test]
    fn a_chunked_answer_is_decoded_across_pieces() {
        let raw =
            b"HTTP/1.1 400 Bad Request\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3;x=y\r\n:2}\r\n0\r\n\r\n";
        for step in [1, 3, 7, raw.len()] {
            let (answer, read) = read_in_pieces(raw, step);
            assert_eq!((answer.status, answer.body), (400, serde_json::json!({"a": 2})), "pieces of {step}");
            assert_eq!(read, raw.len());
        }
        // Trailer fields end with an empty line.
        let trailers = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nX-Sum: 1\r\n\r\n";
        assert_eq!(read_in_pieces(trailers, 1).0.body, "hi");
    }

    #[test]
    fn interim_and_empty_answers() {
        let raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        let (answer, read) = read_in_pieces(raw, 1);
        assert_eq!((answer.status, answer.body, read), (204, Value::Null, raw.len()));
        let raw = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(read_in_pieces(raw, 1).0.body, Value::Null);
    }

    #[test]
    fn without_a_length_the_body_runs_until_the_server_closes() {
        let raw = b"HTTP/1.0 200 OK\r\n\r\nplain text";
        assert!(read_answer(raw, false).unwrap().is_none());
        let answer = read_answer(raw, true).unwrap().expect("whole once closed");
        assert_eq!((answer.status, answer.body), (200, Value::String("plain text".into())));
    }

    #[test]
    fn broken_answers_are_errors() {
        for (raw, closed) in [
            (&b"garbage\r\n\r\n"[..], false),
            (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort", true),
            (b"HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\n", false),
            (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", false),
            (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhello\r\n", false),
            (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel", true),
            (b"HTTP/1.1 200", true),
        ] {
            assert!(read_answer(raw, closed).is_err(), "{}", String::from_utf8_lossy(raw));
        }
    }
}
