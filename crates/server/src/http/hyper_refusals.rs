//! The JSON error body for the answers hyper makes by itself.
//!
//! hyper (the HTTP/1 server under axum) answers some requests before any
//! service sees them, with a hard-coded status and an empty body: `400` for a
//! request line or header that does not parse, `414` for a request target
//! over 65,534 bytes (`MAX_URI_LEN` in hyper's `proto/h1/role.rs`, a
//! constant), `431` for a request head over its read buffer (about 400 KiB)
//! or with over 100 headers. hyper has no hook to shape these answers.
//!
//! The accept loop ([`super::serve`]) wraps each connection in a
//! [`RefusalWriter`], whose writes recognise such an answer and send it
//! with the API's JSON error body instead. hyper writes it as a response head
//! alone (no body follows: `content-length: 0`), with `connection: close`,
//! at the start of a write. The API never answers these statuses without a
//! body itself ([`super::json_errors`] gives every error one), so only
//! hyper's own answers match; anything else passes untouched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::error::ApiErrorCode;

/// The address of a connection's client, as handlers extract it
/// (`ConnectInfo<ClientAddr>`): logins and quotas go by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddr(pub std::net::SocketAddr);

/// A connection's I/O, with hyper's bodiless refusals rewritten.
#[derive(Debug)]
pub struct RefusalWriter<S> {
    inner: S,
    /// A rewritten answer, accepted from hyper but not yet all written.
    pending: Vec<u8>,
    written: usize,
}

impl<S> RefusalWriter<S> {
    /// Wraps a connection.
    pub fn new(inner: S) -> RefusalWriter<S> {
        RefusalWriter { inner, pending: Vec::new(), written: 0 }
    }

    /// The connection.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncWrite + Unpin> RefusalWriter<S> {
    /// Writes out what is pending.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }

    /// Takes `buf` as a rewritten answer if it is one of hyper's refusals.
    fn take_refusal(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Option<Poll<io::Result<usize>>> {
        let answer = with_json_body(buf)?;
        self.pending = answer;
        self.written = 0;
        // Whatever of it cannot be written now is written on the next write,
        // flush or shutdown: hyper flushes its answer, then closes.
        Some(match self.drain(cx) {
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            _ => Poll::Ready(Ok(buf.len())),
        })
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for RefusalWriter<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for RefusalWriter<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(done) = self.take_refusal(cx, buf) {
            return done;
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        // hyper writes a response head as one slice.
        if let Some(first) = bufs.iter().find(|b| !b.is_empty())
            && let Some(done) = self.take_refusal(cx, first)
        {
            return done;
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The refusals hyper makes itself, and what the client is told.
const REFUSALS: [(&[u8], ApiErrorCode, &str); 3] = [
    (b"HTTP/1.1 400 ", ApiErrorCode::BadRequest, "the request is not well-formed HTTP/1.1"),
    (
        b"HTTP/1.1 414 ",
        ApiErrorCode::UriTooLong,
        "the URI is over 65534 bytes (the server refuses URIs over 8192 bytes)",
    ),
    (
        b"HTTP/1.1 431 ",
        ApiErrorCode::HeadersTooLarge,
        "the request's head is too large: too long a URI or headers, or over 100 headers",
    ),
];

/// If `buf` is exactly one of hyper's bodiless refusals, the same answer with
/// the JSON error body.
fn with_json_body(buf: &[u8]) -> Option<Vec<u8>> {
    let (_, code, message) = REFUSALS.iter().find(|(prefix, _, _)| buf.starts_with(prefix))?;
    // The head alone, ending the buffer.
    let head = buf.strip_suffix(b"\r\n\r\n")?;
    let text = std::str::from_utf8(head).ok()?;
    if text.contains("\r\n\r\n") {
        return None;
    }
    let mut lines: Vec<&str> = text.split("\r\n").collect();
    let is = |line: &str, header: &str, value: &str| {
        line.split_once(':').is_some_and(|(h, v)| h.eq_ignore_ascii_case(header) && v.trim() == value)
    };
    if !lines.iter().any(|l| is(l, "connection", "close")) {
        return None;
    }
    let length = lines.iter().position(|l| is(l, "content-length", "0"))?;
    let body = serde_json::json!({"error": {"code": code.as_str(), "message": message}}).to_string();
    let content_length = format!("content-length: {}", body.len());
    lines[length] = &content_length;
    lines.insert(length, "content-type: application/json");
    let mut out = lines.join("\r\n").into_bytes();
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    const HYPER_414: &[u8] =
        b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\ndate: Tue, 24 Nov 2026 01:31:14 GMT\r\n\r\n";

    fn answer(bytes: &[u8]) -> (String, serde_json::Value) {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        (head.to_string(), serde_json::from_str(body).unwrap())
    }

    #[test]
    fn hypers_refusals_get_the_json_body() {
        let (head, body) = answer(&with_json_body(HYPER_414).unwrap());
        assert!(
            head.starts_with("HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-type: application/json\r\n")
        );
        assert!(head.contains(&format!("\r\ncontent-length: {}\r\n", body.to_string().len())), "{head}");
        assert!(head.ends_with("\r\ndate: Tue, 24 Nov 2026 01:31:14 GMT"), "{head}");
        assert_eq!(body["error"]["code"], "uri_too_long");
        let hyper_400 = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(answer(&with_json_body(hyper_400).unwrap()).1["error"]["code"], "bad_request");
        let hyper_431 =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(answer(&with_json_body(hyper_431).unwrap()).1["error"]["code"], "headers_too_large");
    }

    #[test]
    fn anything_else_passes_untouched() {
        for other in [
            // The API's own answers: with a body.
            &b"HTTP/1.1 414 URI Too Long\r\ncontent-type: application/json\r\ncontent-length: 20\r\nconnection: close\r\n\r\n"[..],
            b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
            // Kept alive, a body to follow, other statuses, not a head.
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n",
            b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            b"{\"error\":{}}",
            b"\x81\x05hello",
        ] {
            assert_eq!(with_json_body(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[tokio::test]
    async fn a_connection_writes_the_rewritten_answer_whole() {
        // A tiny pipe: the rewritten answer needs many writes to get through.
        let (ours, mut theirs) = tokio::io::duplex(16);
        let mut writer = RefusalWriter::new(ours);
        let reader = tokio::spawn(async move {
            let mut out = Vec::new();
            theirs.read_to_end(&mut out).await.unwrap();
            out
        });
        writer.write_all(HYPER_414).await.unwrap();
        writer.flush().await.unwrap();
        writer.shutdown().await.unwrap();
        drop(writer);
        let (_, body) = answer(&reader.await.unwrap());
        assert_eq!(body["error"]["code"], "uri_too_long");
    }
}
