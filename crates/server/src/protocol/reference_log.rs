//! Reader for the game logs written by the reference server (`mj-server
//! --logfile`), as found in the conformance corpus.
//!
//! A log is a sequence of records `<cnxN TEXT` (a line the server received on
//! connection N) and `>cnxN TEXT` (a line it sent), each ending in CR LF. A
//! multi-line text field is logged with bare line feeds inside the record, so
//! a physical line that does not begin a record continues the previous one.
//! When a robot closes its connection the server logs `<cnxN (null)` (the C
//! library's rendering of a null string) with no line ending, so whatever is
//! logged next, if anything, follows on the same physical line.

use super::classic::{ClassicParseError, ControllerMessage, PlayerMessage};

/// The text the reference logs for a closed connection.
const CLOSED: &str = "(null)";

/// Which way a logged message travelled, seen from the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `<cnxN`: the server received it from the player on connection N.
    Received,
    /// `>cnxN`: the server sent it on connection N.
    Sent,
}

/// The decoded content of one record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogMessage {
    /// A message from a player (received records).
    Player(PlayerMessage),
    /// A message from the server (sent records).
    Controller(ControllerMessage),
    /// `<cnxN (null)`: the connection was closed by the other end.
    Closed,
}

/// One record of a reference log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// Received or sent.
    pub direction: Direction,
    /// The server's connection number (not a player id).
    pub connection: u32,
    /// 1-based physical line of the log on which the record starts.
    pub line: usize,
    /// The message text: without the `<cnxN ` prefix and the final line
    /// ending, inner line feeds kept; `(null)` for a closed connection.
    pub raw: String,
    /// The parsed message.
    pub message: LogMessage,
}

/// Why a log could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// Text appears before the first record, so it continues nothing.
    #[error("line {line}: text before the first <cnxN or >cnxN record: '{text}'")]
    TextBeforeFirstRecord {
        /// The physical line.
        line: usize,
        /// The text (possibly shortened).
        text: String,
    },
    /// A continuation line follows a `(null)` record, which has no text to continue.
    #[error("line {line}: text after the closed-connection record of line {closed_line} continues nothing: '{text}'")]
    TextAfterClosed {
        /// The physical line of the stray text.
        line: usize,
        /// The line of the `(null)` record.
        closed_line: usize,
        /// The text (possibly shortened).
        text: String,
    },
    /// A line starts like a record but its `cnxN ` header is malformed.
    #[error("line {line}: malformed record header '{text}' (expected <cnxN or >cnxN, a connection number and a space)")]
    BadHeader {
        /// The physical line.
        line: usize,
        /// The start of the line (possibly shortened).
        text: String,
    },
    /// A record's message text is not a valid message.
    #[error("line {line}: cannot parse {direction} record '{raw}': {source}")]
    BadMessage {
        /// The physical line on which the record starts.
        line: usize,
        /// `received` or `sent`.
        direction: &'static str,
        /// The message text (possibly shortened).
        raw: String,
        /// What is wrong with it.
        source: ClassicParseError,
    },
}

/// Shortens untrusted text for an error message.
fn snippet(s: &str) -> String {
    let mut chars = s.chars();
    let mut out: String = chars.by_ref().take(60).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

fn starts_record(s: &str) -> bool {
    s.starts_with("<cnx") || s.starts_with(">cnx")
}

/// A record whose text may still grow by continuation lines.
struct Pending {
    direction: Direction,
    connection: u32,
    line: usize,
    text: String,
}

impl Pending {
    fn finish(mut self) -> Result<LogRecord, LogError> {
        // The record's own terminator: CR LF as the reference writes, or a bare
        // LF as a client may send; a truncated last record has none.
        if self.text.ends_with("\r\n") {
            self.text.truncate(self.text.len() - 2);
        } else if self.text.ends_with('\n') {
            self.text.truncate(self.text.len() - 1);
        }
        let parsed = match self.direction {
            Direction::Received => PlayerMessage::parse(&self.text).map(LogMessage::Player),
            Direction::Sent => ControllerMessage::parse(&self.text).map(LogMessage::Controller),
        };
        let message = parsed.map_err(|source| LogError::BadMessage {
            line: self.line,
            direction: match self.direction {
                Direction::Received => "received",
                Direction::Sent => "sent",
            },
            raw: snippet(&self.text),
            source,
        })?;
        Ok(LogRecord {
            direction: self.direction,
            connection: self.connection,
            line: self.line,
            raw: self.text,
            message,
        })
    }
}

/// Splits `<cnxN ` / `>cnxN ` off the start of `s` (which must start a record).
fn header(s: &str, line: usize) -> Result<(Direction, u32, &str), LogError> {
    let bad = || LogError::BadHeader { line, text: snippet(s) };
    let direction = if s.starts_with('<') { Direction::Received } else { Direction::Sent };
    let after = s.get(4..).ok_or_else(bad)?;
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(bad());
    }
    let connection = after[..digits].parse::<u32>().map_err(|_| bad())?;
    let body = after[digits..].strip_prefix(' ').ok_or_else(bad)?;
    Ok((direction, connection, body))
}

/// Reads a whole reference log into records, in order.
///
/// Every record is parsed: received records as [`PlayerMessage`], sent ones
/// as [`ControllerMessage`], and `<cnxN (null)` as [`LogMessage::Closed`]
/// (also when the next record follows it on the same physical line). The
/// first record that cannot be parsed stops the reading with an error naming
/// its line.
pub fn read_log(text: &str) -> Result<Vec<LogRecord>, LogError> {
    let mut records = Vec::new();
    let mut pending: Option<Pending> = None;
    // Line of the last `(null)` record, while nothing else has followed it.
    let mut closed_at: Option<usize> = None;

    for (index, physical) in text.split_inclusive('\n').enumerate() {
        let line = index + 1;
        if !starts_record(physical) {
            match pending.as_mut() {
                Some(p) => p.text.push_str(physical),
                None => {
                    let stray = snippet(physical.trim_end_matches(['\r', '\n']));
                    return Err(match closed_at {
                        Some(closed_line) => LogError::TextAfterClosed { line, closed_line, text: stray },
                        None => LogError::TextBeforeFirstRecord { line, text: stray },
                    });
                }
            }
            continue;
        }
        if let Some(p) = pending.take() {
            records.push(p.finish()?);
        }
        closed_at = None;
        let mut rest = physical;
        loop {
            let (direction, connection, body) = header(rest, line)?;
            if direction == Direction::Received
                && let Some(after) = body.strip_prefix(CLOSED)
                && (after.is_empty() || after == "\n" || after == "\r\n" || starts_record(after))
            {
                records.push(LogRecord {
                    direction,
                    connection,
                    line,
                    raw: CLOSED.to_string(),
                    message: LogMessage::Closed,
                });
                closed_at = Some(line);
                if starts_record(after) {
                    closed_at = None;
                    rest = after;
                    continue;
                }
                break;
            }
            pending = Some(Pending { direction, connection, line, text: body.to_string() });
            break;
        }
    }
    if let Some(p) = pending.take() {
        records.push(p.finish()?);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::tile::Tile;

    #[test]
    fn reads_simple_records() {
        let log = "<cnx1 Connect 1110 0 R1\r\n>cnx1 ConnectReply 1110 1 \r\n>cnx12 PlayerDraws 1 5D\r\n";
        let recs = read_log(log).expect("valid log");
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0].direction, Direction::Received);
        assert_eq!(recs[0].connection, 1);
        assert_eq!(recs[0].line, 1);
        assert_eq!(recs[0].raw, "Connect 1110 0 R1");
        assert_eq!(
            recs[0].message,
            LogMessage::Player(PlayerMessage::Connect { pvers: 1110, last_id: 0, name: "R1".into() })
        );
        assert_eq!(recs[1].raw, "ConnectReply 1110 1 ");
        assert_eq!(recs[2].connection, 12);
        assert_eq!(recs[2].line, 3);
        let five_d: Tile = "5D".parse().expect("tile");
        assert_eq!(
            recs[2].message,
            LogMessage::Controller(ControllerMessage::PlayerDraws { id: 1, tile: Some(five_d) })
        );
    }

    #[test]
    fn joins_continuation_lines() {
        let log = ">cnx1 HandScore 1 36 basic        20 (going Mah Jong)\ntotal pts    36\nSCORE:       36\r\n\
                   >cnx1 Settlement 8 0 0 -8 East GAINS 8\n\nNorth LOSES 8\n\n\r\n\
                   <cnx3 FormClosedChow 1D\r\n";
        let recs = read_log(log).expect("valid log");
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[0].raw, "HandScore 1 36 basic        20 (going Mah Jong)\ntotal pts    36\nSCORE:       36");
        assert_eq!(recs[1].line, 4);
        assert_eq!(recs[1].raw, "Settlement 8 0 0 -8 East GAINS 8\n\nNorth LOSES 8\n\n");
        assert_eq!(recs[2].line, 9);
        for r in &recs {
            match &r.message {
                LogMessage::Player(m) => assert_eq!(m.to_string(), r.raw),
                LogMessage::Controller(m) => assert_eq!(m.to_string(), r.raw),
                LogMessage::Closed => panic!("no closed record here"),
            }
        }
    }

    #[test]
    fn closed_connection_records() {
        let log = ">cnx4 Pause 0 0 to start next hand\r\n<cnx3 (null)";
        let recs = read_log(log).expect("valid log");
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].message, LogMessage::Closed);
        assert_eq!((recs[1].direction, recs[1].connection, recs[1].line), (Direction::Received, 3, 2));
        assert_eq!(recs[1].raw, "(null)");

        // Several closes in a row, and a record glued to a close.
        let log = "<cnx2 (null)<cnx1 (null)>cnx3 GameOver\r\n<cnx4 Ready\r\n<cnx3 (null)\n";
        let recs = read_log(log).expect("valid log");
        let summary: Vec<_> = recs.iter().map(|r| (r.line, r.connection, r.raw.as_str())).collect();
        assert_eq!(
            summary,
            vec![(1, 2, "(null)"), (1, 1, "(null)"), (1, 3, "GameOver"), (2, 4, "Ready"), (3, 3, "(null)")]
        );
    }

    #[test]
    fn errors_name_their_line() {
        let e = read_log("<cnx1 Ready\r\n>cnx1 PlayerDiscards 1 XX 3 0\r\n").expect_err("bad tile");
        match &e {
            LogError::BadMessage { line, direction, source, .. } => {
                assert_eq!((*line, *direction), (2, "sent"));
                assert!(matches!(source, ClassicParseError::BadTile { .. }));
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().starts_with("line 2: "), "{e}");

        assert!(matches!(read_log("hello\r\n<cnx1 Ready\r\n"), Err(LogError::TextBeforeFirstRecord { line: 1, .. })));
        assert!(matches!(read_log("<cnxA Ready\r\n"), Err(LogError::BadHeader { line: 1, .. })));
        assert!(matches!(read_log("<cnx1Ready\r\n"), Err(LogError::BadHeader { line: 1, .. })));
        assert!(matches!(read_log("<cnx99999999999 Ready\r\n"), Err(LogError::BadHeader { line: 1, .. })));
        assert!(matches!(
            read_log("<cnx1 Ready\r\n<cnx2 (null)\nstray\n"),
            Err(LogError::TextAfterClosed { line: 3, closed_line: 2, .. })
        ));
        // A received record is a player message, not a server one.
        assert!(matches!(
            read_log("<cnx1 PlayerReady 1\r\n"),
            Err(LogError::BadMessage { line: 1, direction: "received", .. })
        ));
        // `(null)` is only special on received records.
        assert!(matches!(read_log(">cnx1 (null)"), Err(LogError::BadMessage { line: 1, .. })));
    }

    #[test]
    fn empty_log_and_garbage_do_not_panic() {
        assert_eq!(read_log(""), Ok(vec![]));
        for s in ["<", "<cnx", ">cnx1", "<cnx1 ", "<cnx1 (null", "\u{feff}<cnx1 Ready", "<cnx1 é\r\n", "\n\n\r"] {
            let _ = read_log(s);
        }
    }
}
