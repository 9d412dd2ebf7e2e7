//! What can be asked of the engine: the players' moves and the table's
//! controller commands, and the errors that refuse them.

use serde::{Deserialize, Serialize};

use super::tile::Tile;
use super::tileset::ChowPosition;

/// A player's place in the game's seating cycle: player 0 is the first East,
/// 1 sits to its right (the first South), and so on. Seat winds rotate from
/// hand to hand; player ids do not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlayerId(pub u8);

impl PlayerId {
    /// The four players.
    pub const ALL: [PlayerId; 4] = [PlayerId(0), PlayerId(1), PlayerId(2), PlayerId(3)];

    /// 0..4.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// In the API's schema a player is its number, 0 to 3.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for PlayerId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
        ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::Integer))
            .description(Some("A player: its seat, 0 (the first East) to 3."))
            .minimum(Some(0))
            .maximum(Some(3))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for PlayerId {}

/// Where the tiles of a new hand's wall come from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum WallSource {
    /// Shuffled with this seed.
    Shuffled {
        /// The seed: the same seed gives the same wall.
        seed: u64,
    },
    /// Exactly these tiles in this order (a wall file).
    Tiles(Vec<Tile>),
}

/// A claim on a discard (or, for Mah-Jong, on a kong being declared).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    /// A chow, with the claimed tile at the given position (`None`: say later).
    Chow(Option<ChowPosition>),
    /// A pung.
    Pung,
    /// A kong.
    Kong,
    /// Mah-Jong (robbing the kong when claiming a kong).
    MahJong,
}

impl Claim {
    /// The claim's name, as in the classic protocol (`Chow`, `Pung`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Claim::Chow(_) => "Chow",
            Claim::Pung => "Pung",
            Claim::Kong => "Kong",
            Claim::MahJong => "MahJong",
        }
    }
}

/// How the winner uses the discard it went out with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DiscardUse {
    /// In a chow (`None`: any position that completes the hand, chosen later).
    Chow(Option<ChowPosition>),
    /// In a pung.
    Pung,
    /// As the pair ("eyes").
    Pair,
    /// In a special hand (Thirteen Unique Wonders).
    SpecialSet,
}

/// A set formed from the concealed tiles after Mah-Jong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ClosedSet {
    /// A pung of this tile.
    Pung(Tile),
    /// A chow starting with this tile.
    Chow(Tile),
    /// A pair of this tile.
    Pair(Tile),
    /// The whole concealed hand as a special hand (winner only).
    SpecialSet,
}

/// A player's move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Set aside a flower or season and draw its replacement.
    DeclareBonus {
        /// The bonus tile.
        tile: Tile,
    },
    /// Finish declaring bonus tiles and kongs at the start of the hand.
    FinishDeclaring,
    /// Discard a tile, optionally declaring an Original Call with it.
    Discard {
        /// The tile.
        tile: Tile,
        /// Declare a calling hand (only with the first discard).
        #[serde(default)]
        calling: bool,
    },
    /// Decline to claim the discard (or kong) with this serial number.
    Pass {
        /// Serial number of the discard or kong.
        discard: u32,
    },
    /// Claim the discard (or rob the kong) with this serial number.
    Claim {
        /// Serial number of the discard or kong.
        discard: u32,
        /// The claim.
        claim: Claim,
    },
    /// Say where the claimed tile goes in a chow granted without a position.
    ChooseChowPosition {
        /// The position.
        position: ChowPosition,
    },
    /// Go Mah-Jong with the tile just drawn.
    MahJong,
    /// Declare a concealed kong of four tiles held.
    DeclareClosedKong {
        /// The tile.
        tile: Tile,
    },
    /// Add the tile just drawn to an exposed pung.
    AddToPung {
        /// The tile.
        tile: Tile,
    },
    /// After going out on a discard: say how the discard is used.
    UseDiscard {
        /// How.
        #[serde(rename = "as")]
        use_as: DiscardUse,
    },
    /// After Mah-Jong: form a set from concealed tiles.
    FormClosedSet {
        /// The set.
        set: ClosedSet,
    },
    /// After Mah-Jong: reveal the remaining concealed tiles (losers; this
    /// ends the player's declarations and scores the hand).
    ShowTiles,
    /// East's tile swap (`TileSwap`): East says how many lots of one tile
    /// each the players swap before its first discard (0 to 3).
    ChooseSwap {
        /// How many lots: 0 (no swap) to 3.
        lots: u8,
    },
    /// East's tile swap: put one concealed tile (not a bonus tile) face down
    /// for the current lot.
    PassTile {
        /// The tile.
        tile: Tile,
    },
}

impl Action {
    /// True for the moves of East's tile swap.
    pub fn is_tile_swap(&self) -> bool {
        matches!(self, Action::ChooseSwap { .. } | Action::PassTile { .. })
    }
}

/// A command to the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Deal the next hand.
    StartHand {
        /// The wall to deal from.
        wall: WallSource,
        /// The dice thrown for the hand, each 1-6. When `None` they are
        /// thrown from the shuffle's seed; an explicit wall without dice
        /// throws no double.
        #[serde(default)]
        dice: Option<[u8; 2]>,
    },
    /// The claim window has timed out: everyone who has not answered passes.
    ClaimTimeout,
    /// The table gives up the hand being played (a player left for good,
    /// mj-server's `--end-on-disconnect`): it is washed out.
    AbandonHand,
    /// The table ends the game between hands (mj-server's
    /// `--end-on-disconnect`).
    EndGame,
    /// A player's move.
    Act {
        /// Who.
        player: PlayerId,
        /// What.
        action: Action,
    },
}

/// Why the engine refused a command. The state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The game has ended.
    #[error("the game is over")]
    GameOver,
    /// A hand is being played.
    #[error("a hand is in progress")]
    HandInProgress,
    /// No hand is being played.
    #[error("no hand is in progress")]
    NoHand,
    /// A player id outside 0..4.
    #[error("there is no player {0}")]
    NoSuchPlayer(u8),
    /// The wall is not usable.
    #[error("bad wall: {0}")]
    Wall(String),
    /// A die shows something other than 1-6.
    #[error("bad dice: {0} and {1}; each die shows 1 to 6")]
    Dice(u8, u8),
    /// A claim or pass names a discard that is not the current one.
    #[error("discard {given} is not the current one (the current discard is {current})")]
    StaleDiscard {
        /// The serial given.
        given: u32,
        /// The current serial.
        current: u32,
    },
    /// The move is not allowed now; the text says why.
    #[error("{0}")]
    Illegal(&'static str),
    /// Going out (or a declaration after Mah-Jong) refused under
    /// `MinimumDoubles`: no way of arranging the hand makes enough doubles.
    #[error("going out needs at least {needed} {}; this hand can make at most {best}", doubles_word(*.needed))]
    TooFewDoubles {
        /// The doubles needed in this hand.
        needed: u32,
        /// The most doubles any arrangement still open makes.
        best: i64,
    },
    /// Going out (or a declaration after Mah-Jong) refused under
    /// `OneChowOneSuit`: no way of arranging the hand has at most one chow
    /// and one suit, and it is neither a special hand nor a limit hand.
    #[error("with OneChowOneSuit a hand may have only one chow and one suit")]
    OneChowOneSuit,
}

fn doubles_word(n: u32) -> &'static str {
    if n == 1 { "double" } else { "doubles" }
}
