//! Declared sets: chows, pungs, kongs and pairs, exposed or concealed.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::tile::Tile;

/// Where the claimed tile sits in a chow: `Lower` means the claimed tile is the
/// lowest of the three, and so on. The classic protocol also has `AnyPos`,
/// modelled as `Option<ChowPosition>` = `None` where it is allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ChowPosition {
    /// The claimed tile is the lowest of the chow.
    Lower,
    /// The claimed tile is the middle one.
    Middle,
    /// The claimed tile is the highest.
    Upper,
}

impl ChowPosition {
    /// The three positions in the order the reference tries them.
    pub const ALL: [ChowPosition; 3] = [ChowPosition::Lower, ChowPosition::Middle, ChowPosition::Upper];

    /// The protocol word: `Lower`, `Middle` or `Upper`.
    pub fn name(self) -> &'static str {
        match self {
            ChowPosition::Lower => "Lower",
            ChowPosition::Middle => "Middle",
            ChowPosition::Upper => "Upper",
        }
    }

    /// The lowest tile of the chow formed by putting `claimed` at this
    /// position, if such a chow exists.
    pub fn lowest_tile(self, claimed: Tile) -> Option<Tile> {
        let low = match self {
            ChowPosition::Lower => Some(claimed),
            ChowPosition::Middle => claimed.down(1),
            ChowPosition::Upper => claimed.down(2),
        }?;
        low.up(2).map(|_| low)
    }
}

impl FromStr for ChowPosition {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "Lower" => Ok(ChowPosition::Lower),
            "Middle" => Ok(ChowPosition::Middle),
            "Upper" => Ok(ChowPosition::Upper),
            _ => Err(format!("'{s}' is not a chow position (Lower, Middle, Upper)")),
        }
    }
}

/// The shape of a declared set and how it was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SetKind {
    /// Three in sequence made with a claimed discard.
    Chow,
    /// Three alike made with a claimed discard.
    Pung,
    /// Four alike, exposed: claimed from a discard, or made by adding a drawn
    /// tile to an exposed pung (`annexed`).
    Kong {
        /// True when made by adding to an exposed pung.
        annexed: bool,
    },
    /// Three in sequence from the concealed hand (declared only after Mah-Jong).
    ClosedChow,
    /// Three alike from the concealed hand (declared only after Mah-Jong).
    ClosedPung,
    /// Four alike declared from the concealed hand.
    ClosedKong,
    /// A pair made with a claimed discard (only to go out).
    Pair,
    /// A pair from the concealed hand (declared only after Mah-Jong).
    ClosedPair,
}

impl SetKind {
    /// Number of tiles in a set of this kind.
    pub fn tile_count(self) -> usize {
        match self {
            SetKind::Pair | SetKind::ClosedPair => 2,
            SetKind::Kong { .. } | SetKind::ClosedKong => 4,
            _ => 3,
        }
    }
    /// True for the concealed kinds.
    pub fn is_concealed(self) -> bool {
        matches!(self, SetKind::ClosedChow | SetKind::ClosedPung | SetKind::ClosedKong | SetKind::ClosedPair)
    }
    /// True for chows of either kind.
    pub fn is_chow(self) -> bool {
        matches!(self, SetKind::Chow | SetKind::ClosedChow)
    }
    /// True for pairs of either kind.
    pub fn is_pair(self) -> bool {
        matches!(self, SetKind::Pair | SetKind::ClosedPair)
    }
    /// True for kongs of any kind.
    pub fn is_kong(self) -> bool {
        matches!(self, SetKind::Kong { .. } | SetKind::ClosedKong)
    }
}

/// A declared set. A chow is named by its lowest tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TileSet {
    /// What kind of set this is.
    pub kind: SetKind,
    /// The tile of a pung, kong or pair; the lowest tile of a chow.
    pub tile: Tile,
}

impl TileSet {
    /// A set of the given kind.
    pub fn new(kind: SetKind, tile: Tile) -> TileSet {
        TileSet { kind, tile }
    }

    /// The tiles of the set, lowest first.
    pub fn tiles(&self) -> impl Iterator<Item = Tile> + '_ {
        let chow = self.kind.is_chow();
        (0..self.kind.tile_count() as u8)
            .map(move |i| if chow { self.tile.up(i).unwrap_or(self.tile) } else { self.tile })
    }
}

/// Prints the set as the reference's scoring text does: tiles joined by `-`
/// for exposed sets and `+` for concealed ones; a claimed kong is `X-X-X+X`.
impl fmt::Display for TileSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.kind.tile_count();
        for (i, t) in self.tiles().enumerate() {
            if i > 0 {
                let concealed_join =
                    self.kind.is_concealed() || (matches!(self.kind, SetKind::Kong { annexed: false }) && i == n - 1);
                f.write_str(if concealed_join { "+" } else { "-" })?;
            }
            f.write_str(t.code())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Tile {
        s.parse().unwrap()
    }

    #[test]
    fn set_strings_match_the_reference() {
        assert_eq!(TileSet::new(SetKind::Pung, t("6C")).to_string(), "6C-6C-6C");
        assert_eq!(TileSet::new(SetKind::ClosedPung, t("5D")).to_string(), "5D+5D+5D");
        assert_eq!(TileSet::new(SetKind::Kong { annexed: false }, t("RD")).to_string(), "RD-RD-RD+RD");
        assert_eq!(TileSet::new(SetKind::Kong { annexed: true }, t("RD")).to_string(), "RD-RD-RD-RD");
        assert_eq!(TileSet::new(SetKind::ClosedKong, t("EW")).to_string(), "EW+EW+EW+EW");
        assert_eq!(TileSet::new(SetKind::Chow, t("2B")).to_string(), "2B-3B-4B");
        assert_eq!(TileSet::new(SetKind::ClosedChow, t("7D")).to_string(), "7D+8D+9D");
        assert_eq!(TileSet::new(SetKind::ClosedPair, t("RD")).to_string(), "RD+RD");
        assert_eq!(TileSet::new(SetKind::Pair, t("GD")).to_string(), "GD-GD");
    }

    #[test]
    fn chow_positions() {
        assert_eq!(ChowPosition::Lower.lowest_tile(t("7B")), Some(t("7B")));
        assert_eq!(ChowPosition::Lower.lowest_tile(t("8B")), None);
        assert_eq!(ChowPosition::Middle.lowest_tile(t("1B")), None);
        assert_eq!(ChowPosition::Middle.lowest_tile(t("2B")), Some(t("1B")));
        assert_eq!(ChowPosition::Upper.lowest_tile(t("2B")), None);
        assert_eq!(ChowPosition::Upper.lowest_tile(t("3B")), Some(t("1B")));
        assert_eq!(ChowPosition::Upper.lowest_tile(t("EW")), None);
    }
}
