//! Reading a classic client's lines with a bound: a physical line longer
//! than the bound is skipped to its end and reported, never buffered whole,
//! so that a client cannot make the server hold an endless line. A
//! [`MessageReader`] joins continued physical lines into the message lines a
//! session parses; it is what the fuzz target `classic_lines` drives.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, BufReader};

use crate::protocol::classic::WireLineDecoder;

/// Longest physical line a client may send, in bytes (line feed excluded).
/// mj-server's clients send lines of a few dozen bytes.
pub const MAX_LINE: usize = 1024;

/// Longest message a client may send across continued physical lines.
pub const MAX_MESSAGE: usize = 4096;

/// What the next read gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole physical line, without its line feed (a CR before it is kept
    /// for the wire decoder). Bytes that are not UTF-8 are replaced.
    Text(String),
    /// A line longer than the bound: it was skipped.
    TooLong,
    /// The client closed its side (a last unterminated line is given first).
    End,
}

/// Reads physical lines of at most `max` bytes. Cancel-safe: a read given
/// up (by a `select!` taking another branch) loses nothing, since what it
/// took from the socket is kept here for the next read.
pub struct LineReader<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
    too_long: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Lines of at most `max` bytes from `reader`.
    pub fn new(reader: R, max: usize) -> LineReader<R> {
        LineReader { reader, max, line: Vec::new(), too_long: false }
    }

    /// The next physical line.
    pub async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            // The only await: `fill_buf` consumes nothing, so stopping here is safe.
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(if self.line.is_empty() && !self.too_long { Line::End } else { self.take() });
            }
            let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if !self.too_long {
                if self.line.len() + chunk.len() > self.max {
                    self.too_long = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = done.unwrap_or(available.len());
            self.reader.consume(used);
            if done.is_some() {
                return Ok(self.take());
            }
        }
    }

    fn take(&mut self) -> Line {
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.too_long) {
            Line::TooLong
        } else {
            Line::Text(String::from_utf8_lossy(&line).into_owned())
        }
    }
}

/// What the client sent next.
#[derive(Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A message line (continued physical lines joined with line feeds).
    Message(String),
    /// A line or message over the limits: skipped.
    TooLong,
    /// The connection has ended.
    End,
}

/// The client's side of the connection: physical lines, bounded, and the
/// message lines they make. Cancel-safe, as [`LineReader`] is: everything
/// read so far is kept here.
pub struct MessageReader<R> {
    lines: LineReader<BufReader<R>>,
    decoder: WireLineDecoder,
    /// Bytes of the message being reassembled so far.
    total: usize,
}

impl<R: AsyncRead + Unpin> MessageReader<R> {
    /// Message lines from `read`, within [`MAX_LINE`] and [`MAX_MESSAGE`].
    pub fn new(read: R) -> MessageReader<R> {
        MessageReader {
            lines: LineReader::new(BufReader::new(read), MAX_LINE),
            decoder: WireLineDecoder::new(),
            total: 0,
        }
    }

    /// The next message line, reassembled from its physical lines; a
    /// message over the limits is skipped whole, and blank lines are
    /// skipped as mj-server skips them.
    pub async fn next(&mut self) -> Incoming {
        loop {
            let physical = match self.lines.next().await {
                Ok(Line::Text(text)) => text,
                Ok(Line::TooLong) => {
                    self.decoder = WireLineDecoder::new();
                    self.total = 0;
                    return Incoming::TooLong;
                }
                Ok(Line::End) | Err(_) => return Incoming::End,
            };
            self.total += physical.len();
            if self.total > MAX_MESSAGE {
                self.decoder = WireLineDecoder::new();
                self.total = 0;
                return Incoming::TooLong;
            }
            if let Some(line) = self.decoder.push_line(&physical) {
                self.total = 0;
                if line.trim().is_empty() {
                    continue;
                }
                return Incoming::Message(line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(8, input), max);
        let mut out = Vec::new();
        loop {
            let line = reader.next().await.unwrap();
            let end = line == Line::End;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_are_split_bounded_and_skipped_when_too_long() {
        let text = |s: &str| Line::Text(s.to_string());
        assert_eq!(lines(b"Ready\r\nDiscard 1B 0\n", 16).await, vec![text("Ready\r"), text("Discard 1B 0"), Line::End]);
        let long = [b"x".repeat(40), b"\nNoClaim 3\n".to_vec()].concat();
        assert_eq!(lines(&long, 16).await, vec![Line::TooLong, text("NoClaim 3"), Line::End]);
        assert_eq!(lines(b"tail without end", 64).await, vec![text("tail without end"), Line::End]);
        assert_eq!(lines(b"\xff\xfeok\n", 64).await, vec![text("\u{fffd}\u{fffd}ok"), Line::End]);
    }
}
