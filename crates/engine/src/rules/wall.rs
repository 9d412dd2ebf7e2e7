//! The wall: a seeded shuffle or an explicit list of tiles, the live wall drawn
//! from the front, and loose tiles drawn from the back.
//!
//! The bookkeeping follows mj-server exactly, because it decides when a hand
//! is washed out and when a tile is "the last tile":
//! - with `DeadWall`, the last 14 tiles (16 with `DeadWall16`) are the dead wall;
//! - with the 14-tile dead wall, whenever fewer than 13 tiles remain in it after
//!   a loose draw, the end of the live wall moves back by two;
//! - the 16-tile dead wall is never replenished; a loose draw fails when it is
//!   empty;
//! - without a dead wall, loose tiles come from the far end and each one
//!   shortens the live wall by one.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::options::GameOptions;
use super::tile::{BadTileCode, Tile, TileCounts, parse_tiles};

/// The largest wall (with flowers, seasons and animals).
pub const MAX_WALL: usize = 148;

/// A wall of tiles and how far it has been used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wall {
    tiles: Vec<Tile>,
    /// Number of tiles drawn from the live wall.
    live_used: usize,
    /// One past the last tile of the live wall.
    live_end: usize,
    /// One past the last tile of the dead wall (loose tiles come from here).
    dead_end: usize,
    dead_wall: bool,
    replenish: bool,
}

/// Why a wall could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WallError {
    /// A code in a wall file is not a tile.
    #[error(transparent)]
    BadTile(#[from] BadTileCode),
    /// The wall does not hold exactly the tile set of the game.
    #[error("a wall must hold exactly the {expected} tiles of the game's tile set: {reason}")]
    WrongTiles {
        /// 136, plus 8 with flowers and seasons, plus 4 with animals.
        expected: usize,
        /// What is wrong.
        reason: String,
    },
}

impl Wall {
    /// A wall shuffled from a seed: the same seed gives the same wall.
    pub fn shuffled(options: &GameOptions, seed: u64) -> Wall {
        let mut tiles = Tile::full_set(options.flowers, options.animals);
        tiles.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        Wall::new(tiles, options)
    }

    /// A wall in the given order (mj-server's `--wallfile`), checked to be
    /// exactly the game's tile set: with animals exactly when the `Animals`
    /// option is on, with flowers and seasons exactly when `Flowers` is.
    pub fn from_tiles(tiles: Vec<Tile>, options: &GameOptions) -> Result<Wall, WallError> {
        let want = TileCounts::full_set(options.flowers, options.animals);
        let expected = want.total();
        // A tile foreign to the game's set is named first: the likely mistake
        // is a wall for other options, which the tile count alone would hide.
        if let Some(&t) = tiles.iter().find(|&&t| want.get(t) == 0) {
            let why = if t.is_animal() {
                "animals are in play only with the Animals option"
            } else {
                "flowers and seasons are in play only with the Flowers option"
            };
            return Err(WallError::WrongTiles { expected, reason: format!("{t} is not in the tile set ({why})") });
        }
        if tiles.len() != expected {
            return Err(WallError::WrongTiles { expected, reason: format!("{} tiles given", tiles.len()) });
        }
        let have = TileCounts::of(tiles.iter().copied());
        if let Some(t) = Tile::all_faces().find(|&t| want.get(t) != have.get(t)) {
            return Err(WallError::WrongTiles {
                expected,
                reason: format!("{} copies of {t} instead of {}", have.get(t), want.get(t)),
            });
        }
        Ok(Wall::new(tiles, options))
    }

    /// Reads a wall file: space-separated tile codes.
    pub fn from_wall_file(text: &str, options: &GameOptions) -> Result<Wall, WallError> {
        Wall::from_tiles(parse_tiles(text)?, options)
    }

    fn new(tiles: Vec<Tile>, options: &GameOptions) -> Wall {
        let size = tiles.len();
        let dead = match (options.dead_wall, options.dead_wall_16) {
            (false, _) => 0,
            (true, false) => 14,
            (true, true) => 16,
        };
        Wall {
            tiles,
            live_used: 0,
            live_end: size - dead,
            dead_end: size,
            dead_wall: options.dead_wall,
            replenish: !options.dead_wall_16,
        }
    }

    /// All tiles of the wall in order, drawn or not.
    pub fn tiles(&self) -> &[Tile] {
        &self.tiles
    }

    /// The next live tile, if the live wall is not exhausted.
    pub fn peek_live(&self) -> Option<Tile> {
        (self.live_used < self.live_end).then(|| self.tiles[self.live_used])
    }

    /// Draws the next live tile.
    pub fn draw_live(&mut self) -> Option<Tile> {
        let t = self.peek_live()?;
        self.live_used += 1;
        Some(t)
    }

    /// The next loose tile, if one can be drawn.
    pub fn peek_loose(&self) -> Option<Tile> {
        let empty = if self.dead_wall { self.dead_end == self.live_end } else { self.dead_end == self.live_used };
        (!empty).then(|| self.tiles[self.dead_end - 1])
    }

    /// Draws a loose tile from the back of the wall, adjusting the live wall
    /// as the dead-wall rules require.
    pub fn draw_loose(&mut self) -> Option<Tile> {
        let t = self.peek_loose()?;
        self.dead_end -= 1;
        if !self.dead_wall {
            self.live_end -= 1;
        } else if self.replenish && self.dead_end < self.live_end + 13 {
            // The live end may pass tiles already drawn; the next live draw
            // then fails and the hand is washed out, as in mj-server.
            self.live_end = self.live_end.saturating_sub(2);
        }
        Some(t)
    }

    /// Tiles left in the live wall (0 when exhausted).
    pub fn live_remaining(&self) -> usize {
        self.live_end.saturating_sub(self.live_used)
    }

    /// True when no live tile is left: the mark of "winning with last tile".
    pub fn live_exhausted(&self) -> bool {
        self.live_used >= self.live_end
    }

    /// True when exactly the whole live wall has been drawn (the reference's
    /// test for Catching the Moon from the Bottom of the Sea uses equality).
    pub fn live_exactly_exhausted(&self) -> bool {
        self.live_used == self.live_end
    }

    /// Tiles left in the dead wall.
    pub fn dead_remaining(&self) -> usize {
        self.dead_end.saturating_sub(self.live_end.max(self.live_used))
    }

    /// The tiles not yet drawn, live and dead (for tile-conservation checks).
    pub fn undrawn(&self) -> &[Tile] {
        &self.tiles[self.live_used..self.dead_end.max(self.live_used)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(dead_wall: bool, sixteen: bool, flowers: bool) -> GameOptions {
        GameOptions { dead_wall, dead_wall_16: sixteen, flowers, ..GameOptions::default() }
    }

    #[test]
    fn same_seed_same_wall() {
        let o = GameOptions::default();
        assert_eq!(Wall::shuffled(&o, 7), Wall::shuffled(&o, 7));
        assert_ne!(Wall::shuffled(&o, 7).tiles(), Wall::shuffled(&o, 8).tiles());
        assert_eq!(Wall::shuffled(&opts(true, false, false), 1).tiles().len(), 136);
    }

    #[test]
    fn fourteen_tile_dead_wall_is_replenished() {
        let mut w = Wall::shuffled(&opts(true, false, true), 1);
        assert_eq!(w.live_remaining(), 130);
        w.draw_loose().unwrap();
        assert_eq!(w.live_remaining(), 130, "13 left in the dead wall: not yet replenished");
        w.draw_loose().unwrap();
        assert_eq!(w.live_remaining(), 128, "12 left: the live wall gives up two tiles");
        assert_eq!(w.dead_remaining(), 14);
    }

    #[test]
    fn sixteen_tile_dead_wall_runs_out() {
        let mut w = Wall::shuffled(&opts(true, true, true), 1);
        assert_eq!(w.live_remaining(), 128);
        for _ in 0..16 {
            assert!(w.draw_loose().is_some());
        }
        assert_eq!(w.draw_loose(), None);
        assert_eq!(w.live_remaining(), 128);
    }

    #[test]
    fn no_dead_wall_shortens_the_live_wall() {
        let mut w = Wall::shuffled(&opts(false, false, true), 1);
        assert_eq!(w.live_remaining(), 144);
        let last = *w.tiles().last().unwrap();
        assert_eq!(w.draw_loose(), Some(last));
        assert_eq!(w.live_remaining(), 143);
        while w.draw_live().is_some() {}
        assert!(w.live_exhausted());
        assert_eq!(w.draw_loose(), None);
    }

    #[test]
    fn wall_files_are_checked() {
        let o = GameOptions::default();
        let text: Vec<&str> = Tile::full_set(true, false).iter().map(|t| t.code()).collect();
        let w = Wall::from_wall_file(&text.join(" "), &o).unwrap();
        assert_eq!(w.tiles()[0].code(), "1B");
        let e = Wall::from_wall_file(&text[1..].join(" "), &o).unwrap_err();
        assert!(e.to_string().contains("143 tiles given"));
        let mut dup = text.clone();
        dup[0] = "2B";
        let e = Wall::from_wall_file(&dup.join(" "), &o).unwrap_err();
        assert!(e.to_string().contains("3 copies of 1B"), "{e}");
        assert!(Wall::from_wall_file("1B ZZ", &o).is_err());
        let mut cat = text.clone();
        cat[0] = "1A";
        let e = Wall::from_wall_file(&cat.join(" "), &o).unwrap_err();
        assert!(e.to_string().contains("1A is not in the tile set (animals are in play only with"), "{e}");
        let e = Wall::from_wall_file(&text.join(" "), &opts(true, false, false)).unwrap_err();
        assert!(e.to_string().contains("1F is not in the tile set (flowers and seasons"), "{e}");
    }

    #[test]
    fn animals_join_the_wall_with_their_option() {
        let o = GameOptions { animals: true, ..GameOptions::default() };
        let w = Wall::shuffled(&o, 3);
        assert_eq!(w.tiles().len(), MAX_WALL);
        assert_eq!(w.tiles().iter().filter(|t| t.is_animal()).count(), 4);
        let text: Vec<&str> = w.tiles().iter().map(|t| t.code()).collect();
        assert_eq!(Wall::from_wall_file(&text.join(" "), &o).unwrap(), w);
        let e = Wall::from_wall_file(&text[..147].join(" "), &o).unwrap_err();
        assert!(e.to_string().contains("exactly the 148 tiles") && e.to_string().contains("147 tiles given"), "{e}");
        let no_flowers = GameOptions { flowers: false, ..o };
        assert_eq!(Wall::shuffled(&no_flowers, 3).tiles().len(), 140);
    }
}
