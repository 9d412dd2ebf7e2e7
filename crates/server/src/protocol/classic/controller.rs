//! The server's messages: [`ControllerMessage`], the `CMsg` types of the
//! reference, with their fields in the order of its `protocol.h`.

use super::fields::{
    ChowPos, Flag, Int, MaybeTile, OptionEntry, PlayerOpt, Text, TileCode, TileList, WindLetter, Word16,
};
use super::fields::{GameOptionEntry, PlayerOption};
use super::grammar::messages;
use crate::rules::tile::{Tile, Wind};
use crate::rules::tileset::ChowPosition;

messages! {
    /// A message from the server (the controller) to a player: the `CMsg`
    /// types of the reference. Fields are named as in the C structs.
    pub enum ControllerMessage ("controller") {
        /// A request was refused; `error` says why.
        Error {
            /// Sequence number of the player message that caused the error, or 0.
            seqno: i32 = Int,
            /// Human-readable explanation.
            error: String = Text,
        },
        /// Informational, human-readable view of a player's tiles.
        InfoTiles {
            /// Player concerned.
            id: i32 = Int,
            /// The tiles, in the reference's free display format.
            tileinfo: String = Text,
        },
        /// The game state was saved.
        StateSaved {
            /// Player who asked for the save.
            id: i32 = Int,
            /// File the server saved to.
            filename: String = Text,
        },
        /// Answer to `Connect`.
        ConnectReply {
            /// Protocol version of the server.
            pvers: i32 = Int,
            /// Id assigned to the player; 0 means the connection is refused.
            id: i32 = Int,
            /// Why the connection was refused (empty otherwise).
            reason: String = Text,
        },
        /// A reconnection request was granted.
        Reconnect,
        /// The server requires authentication.
        AuthReqd {
            /// Kind of authentication, currently `basic`.
            authtype: String = Word16,
            /// Extra data for the authentication.
            authdata: String = Text,
        },
        /// The client should reconnect elsewhere (`host:port`).
        Redirect {
            /// The new address.
            dest: String = Text,
        },
        /// Introduces a player (or renames it; an empty name deletes it).
        Player {
            /// Player id.
            id: i32 = Int,
            /// Player name.
            name: String = Text,
        },
        /// The prevailing wind changes.
        NewRound {
            /// Wind of the new round.
            round: Wind = WindLetter,
        },
        /// Starts (or resumes) a game: seating, round and scores.
        Game {
            /// Id of the player in the East seat.
            east: i32 = Int,
            /// Id of South.
            south: i32 = Int,
            /// Id of West.
            west: i32 = Int,
            /// Id of North.
            north: i32 = Int,
            /// Prevailing wind.
            round: Wind = WindLetter,
            /// Hands already completed with this dealer.
            hands_as_east: i32 = Int,
            /// Id of the first East of the game.
            firsteast: i32 = Int,
            /// East's score so far.
            east_score: i32 = Int,
            /// South's score so far.
            south_score: i32 = Int,
            /// West's score so far.
            west_score: i32 = Int,
            /// North's score so far.
            north_score: i32 = Int,
            /// Protocol version used in this game.
            protversion: i32 = Int,
            /// Id of the player managing the game (0 for none).
            manager: i32 = Int,
        },
        /// A new hand starts.
        NewHand {
            /// Id of this hand's East.
            east: i32 = Int,
            /// Wall (as a seat number) where the live wall notionally starts.
            start_wall: i32 = Int,
            /// Stack (from the right) where the live wall notionally starts.
            start_stack: i32 = Int,
        },
        /// A player sets a flower or season aside; `None` means it has no more.
        PlayerDeclaresSpecial {
            /// Player declaring.
            id: i32 = Int,
            /// The bonus tile, or `None` (`--`) when finished.
            tile: Option<Tile> = MaybeTile,
        },
        /// Play may start (or resume).
        StartPlay {
            /// Player due to act.
            id: i32 = Int,
        },
        /// Play is stopped.
        StopPlay {
            /// Why.
            reason: String = Text,
        },
        /// The server asks the players to confirm with `Ready`.
        Pause {
            /// 0, or the one player not asked to confirm.
            exempt: i32 = Int,
            /// 0, or the player who asked for the pause.
            requestor: i32 = Int,
            /// Why, phrased as an infinitive (`to start play`).
            reason: String = Text,
        },
        /// A player has confirmed a pause.
        PlayerReady {
            /// That player.
            id: i32 = Int,
        },
        /// A draw from the live wall (`None` in the copies for other players).
        PlayerDraws {
            /// Player drawing.
            id: i32 = Int,
            /// The tile drawn, hidden (`--`) from everybody but the drawer.
            tile: Option<Tile> = MaybeTile,
        },
        /// A draw of a loose tile from the dead wall.
        PlayerDrawsLoose {
            /// Player drawing.
            id: i32 = Int,
            /// The tile drawn, hidden (`--`) from everybody but the drawer.
            tile: Option<Tile> = MaybeTile,
        },
        /// A discard.
        PlayerDiscards {
            /// Player discarding.
            id: i32 = Int,
            /// The tile discarded.
            tile: Tile = TileCode,
            /// Serial number of the discard within the hand.
            discard: i32 = Int,
            /// The player declares Calling.
            calling: bool = Flag,
        },
        /// A claim was refused.
        ClaimDenied {
            /// Player whose claim was refused.
            id: i32 = Int,
            /// Why.
            reason: String = Text,
        },
        /// Acknowledges a `NoClaim`.
        PlayerDoesntClaim {
            /// Player.
            id: i32 = Int,
            /// Serial of the current discard.
            discard: i32 = Int,
            /// The server generated it on a timeout.
            timeout: bool = Flag,
        },
        /// The claimed discard was dangerous.
        DangerousDiscard {
            /// The discarder.
            id: i32 = Int,
            /// Serial of the dangerous discard.
            discard: i32 = Int,
            /// The discarder had no safe alternative.
            nochoice: bool = Flag,
        },
        /// A pung claim was made (not yet granted).
        PlayerClaimsPung {
            /// Claimant.
            id: i32 = Int,
            /// Serial of the discard claimed.
            discard: i32 = Int,
        },
        /// A pung claim was granted.
        PlayerPungs {
            /// Claimant.
            id: i32 = Int,
            /// Tile of the pung.
            tile: Tile = TileCode,
        },
        /// A concealed pung formed after Mah-Jong.
        PlayerFormsClosedPung {
            /// Player.
            id: i32 = Int,
            /// Tile of the pung.
            tile: Tile = TileCode,
        },
        /// A kong claim was made (not yet granted).
        PlayerClaimsKong {
            /// Claimant.
            id: i32 = Int,
            /// Serial of the discard claimed.
            discard: i32 = Int,
        },
        /// A kong claim was granted.
        PlayerKongs {
            /// Claimant.
            id: i32 = Int,
            /// Tile of the kong.
            tile: Tile = TileCode,
        },
        /// A concealed kong was declared; it may still be robbed.
        PlayerDeclaresClosedKong {
            /// Player.
            id: i32 = Int,
            /// Tile of the kong.
            tile: Tile = TileCode,
            /// Serial given to the kong (for robbing claims).
            discard: i32 = Int,
        },
        /// A drawn tile was added to an exposed pung; the kong may be robbed.
        PlayerAddsToPung {
            /// Player.
            id: i32 = Int,
            /// The tile added.
            tile: Tile = TileCode,
            /// Serial given to the kong (for robbing claims).
            discard: i32 = Int,
        },
        /// The kong just declared is robbed: this player goes out with it.
        PlayerRobsKong {
            /// The robber.
            id: i32 = Int,
            /// The tile robbed.
            tile: Tile = TileCode,
        },
        /// Answer to `QueryMahJong`.
        CanMahJong {
            /// The tile asked about (`None`: no extra tile).
            tile: Option<Tile> = MaybeTile,
            /// Whether that makes a Mah-Jong hand.
            answer: bool = Flag,
        },
        /// A chow claim was made (not yet granted).
        PlayerClaimsChow {
            /// Claimant.
            id: i32 = Int,
            /// Serial of the discard claimed.
            discard: i32 = Int,
            /// Position of the discard in the chow; `None` is `AnyPos`.
            cpos: Option<ChowPosition> = ChowPos,
        },
        /// A chow claim was granted (also used for the Mah-Jong discard).
        PlayerChows {
            /// Claimant.
            id: i32 = Int,
            /// The claimed tile.
            tile: Tile = TileCode,
            /// Its position in the chow; `None` (`AnyPos`) asks the claimant to choose.
            cpos: Option<ChowPosition> = ChowPos,
        },
        /// A concealed chow formed after Mah-Jong.
        PlayerFormsClosedChow {
            /// Player.
            id: i32 = Int,
            /// Lowest tile of the chow.
            tile: Tile = TileCode,
        },
        /// The hand is void.
        WashOut {
            /// Why (`wall exhausted`).
            reason: String = Text,
        },
        /// A Mah-Jong claim was made (not yet granted).
        PlayerClaimsMahJong {
            /// Claimant.
            id: i32 = Int,
            /// Serial of the discard or kong claimed.
            discard: i32 = Int,
        },
        /// A player goes out.
        PlayerMahJongs {
            /// The winner.
            id: i32 = Int,
            /// The tile just drawn, or `None` (`--`) when going out on the discard.
            tile: Option<Tile> = MaybeTile,
        },
        /// The Mah-Jong discard was taken for a pair.
        PlayerPairs {
            /// Player.
            id: i32 = Int,
            /// Tile of the pair.
            tile: Tile = TileCode,
        },
        /// A concealed pair formed after Mah-Jong.
        PlayerFormsClosedPair {
            /// Player.
            id: i32 = Int,
            /// Tile of the pair.
            tile: Tile = TileCode,
        },
        /// A player reveals its remaining concealed tiles.
        PlayerShowsTiles {
            /// Player.
            id: i32 = Int,
            /// The concealed tiles, in the order given.
            tiles: Vec<Tile> = TileList,
        },
        /// The discard was claimed to form a special hand with all concealed tiles.
        PlayerSpecialSet {
            /// Player.
            id: i32 = Int,
            /// The discard.
            tile: Tile = TileCode,
            /// The concealed tiles.
            tiles: Vec<Tile> = TileList,
        },
        /// A special hand was formed from the concealed tiles.
        PlayerFormsClosedSpecialSet {
            /// Player.
            id: i32 = Int,
            /// The concealed tiles.
            tiles: Vec<Tile> = TileList,
        },
        /// A player option was set (or the server asks for it to be acknowledged).
        PlayerOptionSet {
            /// The option.
            option: PlayerOption = PlayerOpt,
            /// This acknowledges a client request.
            ack: bool = Flag,
            /// Value of an integer or boolean option.
            value: i32 = Int,
            /// Value of a string option.
            text: String = Text,
        },
        /// The score of one player's hand, with its explanation.
        HandScore {
            /// Player.
            id: i32 = Int,
            /// Score of the hand.
            score: i32 = Int,
            /// Multi-line breakdown; ends with the `SCORE:` line.
            explanation: String = Text,
        },
        /// Change of each seat's score at the end of a hand.
        Settlement {
            /// Change for the East seat of the hand (by seat, not id).
            east: i32 = Int,
            /// Change for South.
            south: i32 = Int,
            /// Change for West.
            west: i32 = Int,
            /// Change for North.
            north: i32 = Int,
            /// Multi-line list of payments.
            explanation: String = Text,
        },
        /// The game is over.
        GameOver,
        /// The value of one game option (lists end with the pseudo-option `End`).
        GameOption {
            /// Player who set it, or 0.
            id: i32 = Int,
            /// The option.
            optentry: GameOptionEntry = OptionEntry,
        },
        /// The game has a new manager.
        ChangeManager {
            /// Player who asked for the change.
            id: i32 = Int,
            /// New manager, or 0 for none.
            manager: i32 = Int,
        },
        /// A chat message.
        Message {
            /// Sender id, or 0 for the server.
            sender: i32 = Int,
            /// Addressee id, or 0 for everybody.
            addressee: i32 = Int,
            /// The message.
            text: String = Text,
        },
        /// Sets up the wall (used by the server internally and for testing).
        Wall {
            /// The wall, as space-separated tile codes.
            wall: Vec<Tile> = TileList,
        },
        /// A comment in a file of protocol commands; written `#` on the wire.
        Comment [wire "#"] [alias "Comment"] {
            /// The comment.
            comment: String = Text,
        },
        /// Debugging: the server swapped a tile of a player's hand with one in the wall.
        SwapTile {
            /// Player concerned.
            id: i32 = Int,
            /// Tile taken out of the hand.
            oldtile: Tile = TileCode,
            /// Tile put in its place.
            newtile: Tile = TileCode,
        },
    }
}
