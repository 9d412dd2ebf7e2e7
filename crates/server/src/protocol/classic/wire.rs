//! Message lines on a socket: the reference escapes backslashes and inner
//! line feeds ([`encode_wire`]), and a reader puts the physical lines back
//! together ([`WireLineDecoder`]); its game logs record the lines unescaped.

/// Escapes one message line for a socket and appends CR LF, as the reference
/// server writes it: backslashes are doubled and every inner line feed
/// becomes backslash CR LF, so a multi-line message is sent as several
/// physical lines each ending in a backslash except the last.
pub fn encode_wire(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 2);
    for c in line.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\\r\n"),
            c => out.push(c),
        }
    }
    out.push_str("\r\n");
    out
}

/// Reassembles message lines from the physical lines of a socket, undoing
/// [`encode_wire`] the way the reference's `get_line` does: a physical line
/// ending in an odd number of backslashes continues on the next one (the
/// backslash standing for a line feed), and any other backslash is dropped
/// while the character after it is kept.
#[derive(Clone, Debug, Default)]
pub struct WireLineDecoder {
    pending: String,
}

impl WireLineDecoder {
    /// A decoder with nothing pending.
    pub fn new() -> WireLineDecoder {
        WireLineDecoder::default()
    }

    /// Feeds one physical line (with or without its LF / CR LF). Returns the
    /// complete message line once its last physical line has arrived.
    pub fn push_line(&mut self, physical: &str) -> Option<String> {
        let line = physical.strip_suffix('\n').unwrap_or(physical);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let trailing = line.len() - line.trim_end_matches('\\').len();
        if trailing % 2 == 1 {
            // The odd backslash is the continuation mark: it stands for the
            // line feed, and must not take part in unescaping.
            self.pending.push_str(&line[..line.len() - 1]);
            self.pending.push('\n');
            return None;
        }
        self.pending.push_str(line);
        let raw = std::mem::take(&mut self.pending);
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else {
                out.push(c);
            }
        }
        Some(out)
    }

    /// True while a multi-line message is only partly received.
    pub fn is_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}
