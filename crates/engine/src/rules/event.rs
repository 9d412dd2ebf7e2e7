//! What the engine reports: every event says who may see it.

use serde::{Deserialize, Serialize};

use super::command::{Claim, PlayerId};
use super::scoring::HandScore;
use super::settlement::Settlement;
use super::swap::SwapDirection;
use super::tile::{Tile, Wind};
use super::tileset::{ChowPosition, TileSet};

/// Who may see an event. A player never receives another player's concealed
/// tiles or the wall; spectators see only `Everyone` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Audience {
    /// Everybody, spectators included.
    Everyone,
    /// Only this player.
    Only(PlayerId),
    /// Every player but this one (and spectators).
    AllBut(PlayerId),
}

impl Audience {
    /// True if a player (or `None` for a spectator) may see events for this audience.
    pub fn includes(self, viewer: Option<PlayerId>) -> bool {
        match (self, viewer) {
            (Audience::Everyone, _) => true,
            (Audience::Only(p), Some(v)) => p == v,
            (Audience::Only(_), None) => false,
            (Audience::AllBut(p), Some(v)) => p != v,
            (Audience::AllBut(_), None) => true,
        }
    }
}

/// An event with its audience.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Emitted {
    /// Who may see it.
    pub to: Audience,
    /// What happened.
    pub event: Event,
}

/// Something that happened in the game. Tile fields that a recipient may not
/// see are `None` (a hidden tile, `--` in the classic protocol).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A new hand begins (after a new round, if `new_round`).
    HandStarted {
        /// 1-based number of the hand in the game.
        hand: u32,
        /// The player who is East this hand.
        east: PlayerId,
        /// The prevailing wind.
        round: Wind,
        /// True if this hand starts a new round.
        new_round: bool,
        /// Which of the dealer's extra hands this is (0: the deal has just passed).
        extra_hands: u32,
        /// The dice thrown for the hand, if known.
        dice: Option<[u8; 2]>,
    },
    /// A player drew a tile (during the deal, from the live wall, or a loose tile).
    Drew {
        /// Who.
        player: PlayerId,
        /// The tile, for the drawer only.
        tile: Option<Tile>,
        /// True for a loose tile from the dead wall.
        loose: bool,
        /// Tiles left in the live wall after the draw (a loose draw may
        /// shorten the live wall too). Absent from games stored before it
        /// was sent, which read it as 0.
        #[serde(default)]
        live_tiles_left: u32,
    },
    /// A player set aside a flower or season.
    DeclaredBonus {
        /// Who.
        player: PlayerId,
        /// The bonus tile.
        tile: Tile,
    },
    /// A player finished declaring at the start of the hand.
    FinishedDeclaring {
        /// Who.
        player: PlayerId,
    },
    /// Everybody has declared (and East's tile swap is over): East plays.
    PlayStarted {
        /// East.
        east: PlayerId,
    },
    /// Everybody has declared and `TileSwap` is on: East chooses how many
    /// lots of tiles to swap.
    SwapStarted {
        /// East.
        east: PlayerId,
    },
    /// East chose how many lots to swap (0: none).
    SwapChosen {
        /// East.
        player: PlayerId,
        /// The lots, 0 to 3.
        lots: u8,
    },
    /// A player put a tile face down for a lot of the swap: the tile is
    /// shown to that player only.
    TilePassed {
        /// Who.
        player: PlayerId,
        /// The lot, 1-based.
        lot: u8,
        /// The tile, for the player only.
        tile: Option<Tile>,
    },
    /// All four players have put a tile down: the lot moves.
    LotPassed {
        /// The lot, 1-based.
        lot: u8,
        /// Where the tiles went.
        direction: SwapDirection,
    },
    /// The tile a player received in a lot of the swap (told to the receiver
    /// only; the giver saw it when passing it).
    TileReceived {
        /// The receiver.
        player: PlayerId,
        /// The giver.
        from: PlayerId,
        /// The lot, 1-based.
        lot: u8,
        /// The tile.
        tile: Tile,
    },
    /// A player discarded.
    Discarded {
        /// Who.
        player: PlayerId,
        /// The tile.
        tile: Tile,
        /// Serial number of the discard in the hand (kongs are numbered too).
        discard: u32,
        /// With an Original Call.
        calling: bool,
    },
    /// A player passed on a discard or kong (told only to that player).
    Passed {
        /// Who.
        player: PlayerId,
        /// The discard's serial.
        discard: u32,
        /// Because the claim window timed out.
        timeout: bool,
    },
    /// A player claimed (not yet granted).
    Claimed {
        /// Who.
        player: PlayerId,
        /// The discard's serial.
        discard: u32,
        /// The claim.
        claim: Claim,
    },
    /// A claim lost to a better one (told only to the claimant).
    ClaimDenied {
        /// Who.
        player: PlayerId,
        /// Why.
        reason: String,
    },
    /// A chow claim without a position was granted: the claimant must now say
    /// where the tile goes (told only to the claimant).
    ChowPositionNeeded {
        /// Who.
        player: PlayerId,
        /// The claimed tile.
        tile: Tile,
    },
    /// A chow was made with the discard.
    Chowed {
        /// Who.
        player: PlayerId,
        /// The claimed tile.
        tile: Tile,
        /// Where it sits in the chow.
        position: ChowPosition,
    },
    /// A pung was made with the discard.
    Punged {
        /// Who.
        player: PlayerId,
        /// The tile.
        tile: Tile,
    },
    /// A kong was made with the discard.
    Konged {
        /// Who.
        player: PlayerId,
        /// The tile.
        tile: Tile,
    },
    /// The winner paired the discard it went out with.
    Paired {
        /// Who.
        player: PlayerId,
        /// The tile.
        tile: Tile,
    },
    /// A concealed kong was declared (it may be robbed for Thirteen Unique Wonders).
    DeclaredClosedKong {
        /// Who.
        player: PlayerId,
        /// The tile.
        tile: Tile,
        /// Serial number, for robbing claims.
        discard: u32,
    },
    /// A drawn tile was added to an exposed pung (the kong may be robbed).
    AddedToPung {
        /// Who.
        player: PlayerId,
        /// The tile.
        tile: Tile,
        /// Serial number, for robbing claims.
        discard: u32,
    },
    /// The kong just declared was robbed: the robber goes out with its tile.
    RobbedKong {
        /// The robber.
        player: PlayerId,
        /// The tile.
        tile: Tile,
    },
    /// The discard just claimed was dangerous (letting off a cannon).
    DangerousDiscard {
        /// The discarder.
        player: PlayerId,
        /// The discard's serial.
        discard: u32,
        /// The discarder had no safe alternative.
        no_choice: bool,
    },
    /// A player went Mah-Jong: with the tile just drawn (`tile`), or on the
    /// current discard (`tile` is `None`).
    MahJong {
        /// Who.
        player: PlayerId,
        /// The tile drawn, when not going out on a discard.
        tile: Option<Tile>,
    },
    /// The winner declared its whole hand as a special hand.
    DeclaredSpecialSet {
        /// Who.
        player: PlayerId,
        /// The tiles.
        tiles: Vec<Tile>,
    },
    /// After Mah-Jong, a player formed a set from concealed tiles.
    FormedClosedSet {
        /// Who.
        player: PlayerId,
        /// The set.
        set: TileSet,
    },
    /// A player revealed its remaining concealed tiles.
    ShowedTiles {
        /// Who.
        player: PlayerId,
        /// The tiles.
        tiles: Vec<Tile>,
    },
    /// A hand was scored.
    HandScored {
        /// Whose.
        player: PlayerId,
        /// The score and its breakdown.
        score: HandScore,
    },
    /// The hand was settled.
    Settled {
        /// The settlement, by seat.
        settlement: Settlement,
        /// Each player's change, by player id.
        deltas: [i64; 4],
        /// Each player's cumulative score after the hand, by player id.
        scores: [i64; 4],
    },
    /// The hand is void.
    WashedOut {
        /// Why (`wall exhausted`).
        reason: String,
    },
    /// The game has ended.
    GameOver {
        /// Final scores by player id.
        scores: [i64; 4],
    },
}
