//! The breakdown as it is written: a tally of points, doubles and limits
//! that writes the reference's lines as items are scored, and the C-like
//! padding of its numbers.

use std::borrow::Cow;

use arrayvec::ArrayVec;

use super::ScoreItem;
use crate::rules::options::{GameOptions, ScoreValue};
use crate::rules::tile::Tile;
use crate::rules::tileset::TileSet;

/// Appends `s` padded with spaces on the right to `width` (C's `%-Ns`).
pub(super) fn pad_right(buf: &mut String, s: &str, width: usize) {
    buf.push_str(s);
    for _ in s.len()..width {
        buf.push(' ');
    }
}

/// Appends `n` padded with spaces on the left to `width` (C's `%Nd`).
pub(super) fn pad_num(buf: &mut String, n: i64, width: usize) {
    let mut digits = [0u8; 24];
    let mut i = digits.len();
    let mut v = n.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        digits[i] = b'-';
    }
    let len = digits.len() - i;
    for _ in len..width {
        buf.push(' ');
    }
    // The digits are ASCII.
    buf.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

/// Appends a set as the reference prints it (see [`TileSet`]'s `Display`).
fn push_set(buf: &mut String, set: &TileSet) {
    use std::fmt::Write;
    let _ = write!(buf, "{set}");
}

/// Formats a number of hundredths of a limit as C's `%4g` of `c/100` would.
fn limit_fraction(centi: i64) -> String {
    let whole = centi / 100;
    let frac = centi % 100;
    let s = if frac == 0 {
        whole.to_string()
    } else {
        let f = format!("{:02}", frac);
        format!("{whole}.{}", f.trim_end_matches('0'))
    };
    format!("{s:>4}")
}

/// Accumulates points, doubles and limits as the reference's `doscore` does,
/// writing the breakdown lines as it goes.
pub(super) struct Tally {
    pub(super) limit: i64,
    pub(super) no_limit: bool,
    pub(super) points: i64,
    pub(super) doubles: i64,
    pub(super) centi_limits: i64,
    pub(super) point_lines: String,
    pub(super) double_lines: String,
    pub(super) limit_lines: String,
    pub(super) items: Vec<ScoreItem>,
}

/// A left-hand label: text, or a set printed in the reference's notation;
/// text may name the tiles the item comes from.
#[derive(Clone, Copy)]
pub(super) enum Label<'a> {
    Text(&'a str),
    Set(&'a TileSet),
    Tiles(&'a str, &'a [Tile]),
}

impl Label<'_> {
    fn write(self, buf: &mut String, width: usize) {
        let start = buf.len();
        match self {
            Label::Text(t) | Label::Tiles(t, _) => buf.push_str(t),
            Label::Set(s) => push_set(buf, s),
        }
        for _ in buf.len() - start..width {
            buf.push(' ');
        }
    }
}

fn end_line(buf: &mut String, reason: &str) {
    buf.push_str(" (");
    buf.push_str(reason);
    buf.push_str(")\n");
}

impl Tally {
    /// An empty tally under these options.
    pub(super) fn new(options: &GameOptions) -> Tally {
        Tally {
            limit: options.score_limit as i64,
            no_limit: options.no_limit,
            points: 0,
            doubles: 0,
            centi_limits: 0,
            point_lines: String::with_capacity(256),
            double_lines: String::with_capacity(128),
            limit_lines: String::new(),
            items: Vec::with_capacity(12),
        }
    }

    pub(super) fn score(&mut self, left: Label<'_>, value: ScoreValue, reason: &'static str) {
        let (pts, dbls, clims) = (value.points_part(), value.doubles_part(), value.centi_limits());
        let use_parts = clims == 0 || self.no_limit;
        let use_limit = clims != 0 && !(self.no_limit && (pts != 0 || dbls != 0));
        let item = ScoreItem {
            name: Cow::Borrowed(reason),
            points: if use_parts { pts } else { 0 },
            doubles: if use_parts { dbls } else { 0 },
            limit_percent: if use_limit { clims } else { 0 },
            set: match left {
                Label::Set(s) => Some(*s),
                _ => None,
            },
            tiles: match left {
                Label::Tiles(_, tiles) => tiles.iter().copied().take(8).collect(),
                _ => ArrayVec::new(),
            },
        };
        if item.points != 0 || item.doubles != 0 || item.limit_percent != 0 {
            self.items.push(item);
        }
        if use_parts && pts != 0 {
            self.points += pts;
            left.write(&mut self.point_lines, 12);
            self.point_lines.push(' ');
            pad_num(&mut self.point_lines, pts, 2);
            end_line(&mut self.point_lines, reason);
        }
        if use_parts && dbls != 0 {
            self.doubles += dbls;
            left.write(&mut self.double_lines, 12);
            self.double_lines.push_str("  ");
            pad_num(&mut self.double_lines, dbls, 1);
            self.double_lines.push_str(" dbl");
            end_line(&mut self.double_lines, reason);
        }
        if use_limit {
            self.centi_limits = self.centi_limits.max(clims);
            if clims == 100 {
                pad_right(&mut self.limit_lines, "Limit Hand", 10);
                self.limit_lines.push(' ');
                pad_num(&mut self.limit_lines, self.limit, 4);
            } else {
                self.limit_lines.push_str(&limit_fraction(clims));
                self.limit_lines.push_str(" Limit ");
                pad_num(&mut self.limit_lines, clims * self.limit / 100, 4);
            }
            end_line(&mut self.limit_lines, reason);
        }
    }

    pub(super) fn points(&mut self, left: Label<'_>, n: i64, reason: &'static str) {
        self.score(left, ScoreValue::points(n), reason);
    }

    pub(super) fn double(&mut self, left: Label<'_>, n: i64, reason: &'static str) {
        self.score(left, ScoreValue::doubles(n), reason);
    }

    pub(super) fn limit_hand(&mut self, reason: &'static str) {
        self.score(Label::Text(""), ScoreValue::LIMIT, reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_print_like_c() {
        assert_eq!(limit_fraction(50), " 0.5");
        assert_eq!(limit_fraction(25), "0.25");
        assert_eq!(limit_fraction(150), " 1.5");
        assert_eq!(limit_fraction(200), "   2");
    }

    #[test]
    fn padding_is_c_like() {
        let mut b = String::new();
        pad_num(&mut b, 7, 3);
        pad_num(&mut b, -12, 4);
        pad_num(&mut b, 123456, 2);
        pad_right(&mut b, "ab", 4);
        pad_right(&mut b, "abcdef", 2);
        assert_eq!(b, "  7 -12123456ab  abcdef");
    }
}
