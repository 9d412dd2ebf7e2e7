//! Tiles, suits, winds and dragons, with the two-character codes the reference
//! programs use on the wire (`1B`..`9B`, `1C`..`9C`, `1D`..`9D`, `EW SW WW NW`,
//! `RD WD GD`, `1F`..`4F`, `1S`..`4S`), and `1A`..`4A` for the animal tiles of
//! seed 003, which mj-server does not have (its codes never end in `A`).
//!
//! A [`Tile`] is a small index. Its order is the order in which the reference
//! sorts a hand: bamboo 1-9, characters 1-9, circles 1-9, winds E S W N,
//! dragons red white green, flowers, seasons; the animals come last. Hand
//! analysis relies on the numbers of one suit being consecutive indices.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The eight kinds of tile: three numbered suits, two kinds of honour and three
/// kinds of bonus tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    /// Bamboo (`B`), 1-9.
    Bamboo,
    /// Characters (`C`), 1-9.
    Characters,
    /// Circles, also called dots (`D`), 1-9.
    Circles,
    /// Winds: East, South, West, North.
    Winds,
    /// Dragons: red, white, green.
    Dragons,
    /// Flowers 1-4, one per seat wind.
    Flowers,
    /// Seasons 1-4, one per seat wind.
    Seasons,
    /// Animals 1-4: Cat, Mouse, Cockerel, Centipede (seed 003, option `Animals`).
    Animals,
}

impl Suit {
    /// The three numbered suits, in tile order.
    pub const NUMBERED: [Suit; 3] = [Suit::Bamboo, Suit::Characters, Suit::Circles];

    /// True for bamboo, characters and circles.
    pub fn is_numbered(self) -> bool {
        matches!(self, Suit::Bamboo | Suit::Characters | Suit::Circles)
    }
}

/// A wind: a seat at the table, or the prevailing wind of a round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Wind {
    /// East, the dealer's seat and the first round.
    #[default]
    East,
    /// South.
    South,
    /// West.
    West,
    /// North.
    North,
}

impl Wind {
    /// All four winds in playing order.
    pub const ALL: [Wind; 4] = [Wind::East, Wind::South, Wind::West, Wind::North];

    /// 0 for East up to 3 for North.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The wind with the given index modulo 4.
    pub fn from_index(i: usize) -> Wind {
        Wind::ALL[i % 4]
    }

    /// The wind after this one in playing order (North is followed by East).
    pub fn next(self) -> Wind {
        Wind::from_index(self.index() + 1)
    }

    /// The one-letter name the protocol uses for a round: `E`, `S`, `W`, `N`.
    pub fn letter(self) -> char {
        ['E', 'S', 'W', 'N'][self.index()]
    }

    /// Parses `E`, `S`, `W` or `N`.
    pub fn from_letter(c: &str) -> Option<Wind> {
        match c {
            "E" => Some(Wind::East),
            "S" => Some(Wind::South),
            "W" => Some(Wind::West),
            "N" => Some(Wind::North),
            _ => None,
        }
    }

    /// The seat name padded to five characters, as settlement texts print it.
    pub fn padded_name(self) -> &'static str {
        ["East ", "South", "West ", "North"][self.index()]
    }
}

/// One tile face. Cheap to copy; ordered as the reference sorts hands.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tile(u8);

/// Number of distinct faces that are not bonus tiles (the 34 "normal" tiles).
pub const NORMAL_KINDS: usize = 34;
/// Number of distinct faces including flowers, seasons and animals.
pub const ALL_KINDS: usize = 46;

const BAMBOO: u8 = 0;
const CHARACTERS: u8 = 9;
const CIRCLES: u8 = 18;
const WINDS: u8 = 27;
const DRAGONS: u8 = 31;
const FLOWERS: u8 = 34;
const SEASONS: u8 = 38;
const ANIMALS: u8 = 42;

/// The animals' names, in tile order (`1A` is the Cat).
const ANIMAL_NAMES: [&str; 4] = ["Cat", "Mouse", "Cockerel", "Centipede"];

impl Tile {
    /// Red dragon.
    pub const RED: Tile = Tile(DRAGONS);
    /// White dragon.
    pub const WHITE: Tile = Tile(DRAGONS + 1);
    /// Green dragon.
    pub const GREEN: Tile = Tile(DRAGONS + 2);

    /// The tile with the given index (0..46); `None` outside that range.
    pub fn from_index(i: usize) -> Option<Tile> {
        (i < ALL_KINDS).then_some(Tile(i as u8))
    }

    /// The dense index of this tile: 0..34 for normal tiles, 34..46 for bonus tiles.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// A numbered tile; `None` unless `suit` is numbered and `value` is 1-9.
    pub fn numbered(suit: Suit, value: u8) -> Option<Tile> {
        if !(1..=9).contains(&value) {
            return None;
        }
        let base = match suit {
            Suit::Bamboo => BAMBOO,
            Suit::Characters => CHARACTERS,
            Suit::Circles => CIRCLES,
            _ => return None,
        };
        Some(Tile(base + value - 1))
    }

    /// The wind tile of a wind.
    pub fn wind(w: Wind) -> Tile {
        Tile(WINDS + w as u8)
    }

    /// The flower belonging to a seat wind (1F is East's).
    pub fn flower(w: Wind) -> Tile {
        Tile(FLOWERS + w as u8)
    }

    /// The season belonging to a seat wind (1S is East's).
    pub fn season(w: Wind) -> Tile {
        Tile(SEASONS + w as u8)
    }

    /// The animal tiles, Cat, Mouse, Cockerel and Centipede, in order.
    pub fn animals() -> impl Iterator<Item = Tile> {
        (ANIMALS..ANIMALS + 4).map(Tile)
    }

    /// The suit of this tile.
    pub fn suit(self) -> Suit {
        match self.0 {
            0..=8 => Suit::Bamboo,
            9..=17 => Suit::Characters,
            18..=26 => Suit::Circles,
            27..=30 => Suit::Winds,
            31..=33 => Suit::Dragons,
            34..=37 => Suit::Flowers,
            38..=41 => Suit::Seasons,
            _ => Suit::Animals,
        }
    }

    /// The face value: 1-9 for numbered tiles, 1-4 for winds (E S W N),
    /// flowers, seasons and animals, 1-3 for dragons (red white green).
    pub fn value(self) -> u8 {
        let base = match self.suit() {
            Suit::Bamboo => BAMBOO,
            Suit::Characters => CHARACTERS,
            Suit::Circles => CIRCLES,
            Suit::Winds => WINDS,
            Suit::Dragons => DRAGONS,
            Suit::Flowers => FLOWERS,
            Suit::Seasons => SEASONS,
            Suit::Animals => ANIMALS,
        };
        self.0 - base + 1
    }

    /// For a wind, flower or season: the wind it belongs to.
    pub fn wind_of(self) -> Option<Wind> {
        match self.suit() {
            Suit::Winds | Suit::Flowers | Suit::Seasons => Some(Wind::from_index(self.value() as usize - 1)),
            _ => None,
        }
    }

    /// True for bamboo, characters and circles.
    pub fn is_numbered(self) -> bool {
        self.0 < WINDS
    }
    /// True for winds.
    pub fn is_wind(self) -> bool {
        self.suit() == Suit::Winds
    }
    /// True for dragons.
    pub fn is_dragon(self) -> bool {
        self.suit() == Suit::Dragons
    }
    /// True for winds and dragons.
    pub fn is_honour(self) -> bool {
        (WINDS..FLOWERS).contains(&self.0)
    }
    /// True for bonus tiles: flowers, seasons and animals.
    pub fn is_bonus(self) -> bool {
        self.0 >= FLOWERS
    }
    /// True for the animal tiles.
    pub fn is_animal(self) -> bool {
        self.0 >= ANIMALS
    }
    /// The name of an animal tile (`Cat`, `Mouse`, `Cockerel`, `Centipede`).
    pub fn animal_name(self) -> Option<&'static str> {
        self.0.checked_sub(ANIMALS).and_then(|i| ANIMAL_NAMES.get(i as usize)).copied()
    }
    /// True for the 1 and 9 of a numbered suit.
    pub fn is_terminal(self) -> bool {
        self.is_numbered() && matches!(self.value(), 1 | 9)
    }
    /// Major tiles are terminals and honours.
    pub fn is_major(self) -> bool {
        self.is_honour() || self.is_terminal()
    }
    /// Minor tiles (simples) are the 2-8 of the numbered suits.
    pub fn is_minor(self) -> bool {
        self.is_numbered() && !self.is_terminal()
    }
    /// Green in the sense of Imperial Jade: green dragon and 2, 3, 4, 6, 8 bamboo.
    pub fn is_green(self) -> bool {
        self == Tile::GREEN || (self.suit() == Suit::Bamboo && matches!(self.value(), 2 | 3 | 4 | 6 | 8))
    }

    /// The tile `n` places higher in the same numbered suit, if any.
    pub fn up(self, n: u8) -> Option<Tile> {
        if self.is_numbered() { Tile::numbered(self.suit(), self.value() + n) } else { None }
    }

    /// The tile `n` places lower in the same numbered suit, if any.
    pub fn down(self, n: u8) -> Option<Tile> {
        if self.is_numbered() && self.value() > n { Tile::numbered(self.suit(), self.value() - n) } else { None }
    }

    /// Every normal (non-bonus) tile face, in order.
    pub fn normal_faces() -> impl Iterator<Item = Tile> {
        (0..NORMAL_KINDS as u8).map(Tile)
    }

    /// Every tile face, bonus tiles included, in order.
    pub fn all_faces() -> impl Iterator<Item = Tile> {
        (0..ALL_KINDS as u8).map(Tile)
    }

    /// The thirteen different major tiles of Thirteen Unique Wonders.
    pub fn thirteen_wonders() -> impl Iterator<Item = Tile> {
        Tile::normal_faces().filter(|t| t.is_major())
    }

    /// The two-character code of the tile, as the reference protocol writes it.
    pub fn code(self) -> &'static str {
        const CODES: [&str; ALL_KINDS] = [
            "1B", "2B", "3B", "4B", "5B", "6B", "7B", "8B", "9B", //
            "1C", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", //
            "1D", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", //
            "EW", "SW", "WW", "NW", "RD", "WD", "GD", //
            "1F", "2F", "3F", "4F", "1S", "2S", "3S", "4S", //
            "1A", "2A", "3A", "4A",
        ];
        CODES[self.index()]
    }

    /// The full set of tiles in one wall: four of each normal face, with
    /// `flowers` one of each flower and season, and with `animals` one of
    /// each animal (136 tiles, plus 8 and 4).
    pub fn full_set(flowers: bool, animals: bool) -> Vec<Tile> {
        let mut tiles = Vec::with_capacity(148);
        for t in Tile::normal_faces() {
            tiles.extend([t; 4]);
        }
        if flowers {
            tiles.extend((FLOWERS..ANIMALS).map(Tile));
        }
        if animals {
            tiles.extend(Tile::animals());
        }
        tiles
    }
}

/// The error for a string that is not a tile code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a tile code (expected e.g. 1B, 9C, 5D, EW, RD, 1F, 4S, 1A)")]
pub struct BadTileCode(pub String);

impl FromStr for Tile {
    type Err = BadTileCode;

    fn from_str(s: &str) -> Result<Tile, BadTileCode> {
        let bad = || BadTileCode(s.to_string());
        let bytes = s.as_bytes();
        if bytes.len() != 2 {
            return Err(bad());
        }
        let (a, b) = (bytes[0], bytes[1]);
        let digit = |lo: u8, hi: u8| (a.is_ascii_digit() && (lo..=hi).contains(&(a - b'0'))).then(|| a - b'0');
        let tile = match b {
            b'B' => digit(1, 9).and_then(|v| Tile::numbered(Suit::Bamboo, v)),
            b'C' => digit(1, 9).and_then(|v| Tile::numbered(Suit::Characters, v)),
            b'D' if a.is_ascii_digit() => digit(1, 9).and_then(|v| Tile::numbered(Suit::Circles, v)),
            b'D' => match a {
                b'R' => Some(Tile::RED),
                b'W' => Some(Tile::WHITE),
                b'G' => Some(Tile::GREEN),
                _ => None,
            },
            b'W' => match a {
                b'E' => Some(Tile::wind(Wind::East)),
                b'S' => Some(Tile::wind(Wind::South)),
                b'W' => Some(Tile::wind(Wind::West)),
                b'N' => Some(Tile::wind(Wind::North)),
                _ => None,
            },
            b'F' => digit(1, 4).map(|v| Tile(FLOWERS + v - 1)),
            b'S' => digit(1, 4).map(|v| Tile(SEASONS + v - 1)),
            b'A' => digit(1, 4).map(|v| Tile(ANIMALS + v - 1)),
            _ => None,
        };
        tile.ok_or_else(bad)
    }
}

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl fmt::Debug for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for Tile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Tile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tile, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// In the API's schema a tile is its code: one of the 46 faces.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for Tile {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
        ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::String))
            .description(Some(
                "A tile's code: 1B-9B bamboo, 1C-9C characters, 1D-9D circles, EW SW WW NW winds, RD WD GD \
                 dragons, 1F-4F flowers, 1S-4S seasons, 1A-4A animals.",
            ))
            .enum_values(Some((0..ALL_KINDS as u8).map(|i| Tile(i).code())))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for Tile {}

/// Parses a space-separated list of tile codes, as in a wall file or a
/// `PlayerShowsTiles` message.
pub fn parse_tiles(s: &str) -> Result<Vec<Tile>, BadTileCode> {
    s.split_whitespace().map(str::parse).collect()
}

/// Per-face counts of a collection of tiles, the working form of hand analysis.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TileCounts(pub [u8; ALL_KINDS]);

impl Default for TileCounts {
    fn default() -> Self {
        TileCounts([0; ALL_KINDS])
    }
}

impl TileCounts {
    /// Counts the given tiles.
    pub fn of(tiles: impl IntoIterator<Item = Tile>) -> TileCounts {
        let mut c = TileCounts::default();
        for t in tiles {
            c.0[t.index()] += 1;
        }
        c
    }
    /// The counts of a whole tile set: four of each normal face, with
    /// `flowers` one of each flower and season, and with `animals` one of
    /// each animal.
    pub fn full_set(flowers: bool, animals: bool) -> TileCounts {
        let mut c = TileCounts::default();
        for t in Tile::all_faces() {
            c.0[t.index()] = match t {
                t if t.is_animal() => animals as u8,
                t if t.is_bonus() => flowers as u8,
                _ => 4,
            };
        }
        c
    }

    /// How many of `t`.
    pub fn get(&self, t: Tile) -> u8 {
        self.0[t.index()]
    }
    /// Adds one `t`.
    pub fn add(&mut self, t: Tile) {
        self.0[t.index()] += 1;
    }
    /// Removes one `t`; false (and unchanged) if there is none.
    pub fn remove(&mut self, t: Tile) -> bool {
        let c = &mut self.0[t.index()];
        if *c == 0 {
            return false;
        }
        *c -= 1;
        true
    }
    /// Total number of tiles counted.
    pub fn total(&self) -> usize {
        self.0.iter().map(|&c| c as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for t in Tile::all_faces() {
            assert_eq!(t.code().parse::<Tile>().unwrap(), t);
        }
        assert_eq!(Tile::all_faces().count(), 46);
    }

    #[test]
    fn bad_codes_are_rejected() {
        for s in ["", "0B", "XD", "5F", "0S", "0A", "5A", "1a", "1", "1BB", "ew", "--", "XX"] {
            assert!(s.parse::<Tile>().is_err(), "{s} parsed");
        }
    }

    #[test]
    fn classification() {
        let t = |s: &str| s.parse::<Tile>().unwrap();
        assert!(t("1B").is_terminal() && t("1B").is_major() && !t("1B").is_minor());
        assert!(t("5C").is_minor() && !t("5C").is_major());
        assert!(t("EW").is_honour() && t("EW").is_major() && !t("EW").is_terminal());
        assert!(t("RD").is_dragon() && t("GD").is_green() && !t("RD").is_green());
        assert!(t("6B").is_green() && !t("5B").is_green() && !t("6C").is_green());
        assert!(t("1F").is_bonus() && t("4S").is_bonus() && !t("NW").is_bonus());
        assert_eq!(t("3F").wind_of(), Some(Wind::West));
        assert_eq!(t("NW").wind_of(), Some(Wind::North));
        assert_eq!(t("7D").up(2), Some(t("9D")));
        assert_eq!(t("8D").up(2), None);
        assert_eq!(t("2C").down(2), None);
        assert_eq!(Tile::thirteen_wonders().count(), 13);
        let cat = t("1A");
        assert!(cat.is_bonus() && cat.is_animal() && !cat.is_honour() && !cat.is_major() && !cat.is_green());
        assert!(!t("4S").is_animal() && !t("RD").is_animal());
        assert_eq!((cat.suit(), t("4A").value(), cat.wind_of()), (Suit::Animals, 4, None));
        let names: Vec<_> = Tile::animals().filter_map(Tile::animal_name).collect();
        assert_eq!(names, ["Cat", "Mouse", "Cockerel", "Centipede"]);
        assert_eq!(t("1F").animal_name(), None);
    }

    #[test]
    fn full_sets() {
        let t = |s: &str| s.parse::<Tile>().unwrap();
        assert_eq!(Tile::full_set(true, false).len(), 144);
        assert_eq!(Tile::full_set(false, false).len(), 136);
        assert_eq!(Tile::full_set(true, true).len(), 148);
        assert_eq!(Tile::full_set(false, true).len(), 140);
        for flowers in [true, false] {
            for animals in [true, false] {
                let set = TileCounts::full_set(flowers, animals);
                assert_eq!(set, TileCounts::of(Tile::full_set(flowers, animals)));
                assert_eq!(set.get(t("3A")), animals as u8);
                assert_eq!(set.get(t("3S")), flowers as u8);
            }
        }
    }

    #[test]
    fn order_is_the_reference_sort_order() {
        let codes: Vec<Tile> = parse_tiles("1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD 1F 1S 4S 1A 4A").unwrap();
        let mut sorted = codes.clone();
        sorted.sort();
        assert_eq!(codes, sorted);
    }
}
