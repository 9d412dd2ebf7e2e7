//! The players' messages: [`PlayerMessage`], the `PMsg` types of the
//! reference, with their fields in the order of its `protocol.h`.

use super::fields::PlayerOption;
use super::fields::{ChowPos, Flag, Int, MaybeTile, PlayerOpt, Text, TileCode, Word16};
use super::grammar::messages;
use crate::rules::tile::Tile;
use crate::rules::tileset::ChowPosition;

messages! {
    /// A message from a player to the server: the `PMsg` types of the
    /// reference. Fields are named as in the C structs. The reference's short
    /// aliases (`ds`, `d`, `n`, `p`, `k`, `ck`, `c`, `st`) are accepted when
    /// parsing; printing always uses the full name.
    pub enum PlayerMessage ("player") {
        /// Asks the server to save the game.
        SaveState {
            /// Suggested file name (may be empty).
            filename: String = Text,
        },
        /// Asks the server to load a saved game.
        LoadState {
            /// File to load.
            filename: String = Text,
        },
        /// First message of a connection.
        Connect {
            /// Protocol version of the client.
            pvers: i32 = Int,
            /// Id from a previous session, or 0.
            last_id: i32 = Int,
            /// Player name.
            name: String = Text,
        },
        /// Asks to reconnect without dropping the connection.
        RequestReconnect,
        /// Authentication data.
        AuthInfo {
            /// Kind of authentication, currently `basic`.
            authtype: String = Word16,
            /// The data.
            authdata: String = Text,
        },
        /// New authentication data.
        NewAuthInfo {
            /// Kind of authentication, currently `basic`.
            authtype: String = Word16,
            /// The data.
            authdata: String = Text,
        },
        /// Leaves the game.
        Disconnect,
        /// Declares a flower or season; `None` (`--`) means none left.
        DeclareSpecial [alias "ds"] {
            /// The bonus tile, or `None` when finished.
            tile: Option<Tile> = MaybeTile,
        },
        /// Asks for a pause.
        RequestPause {
            /// Why.
            reason: String = Text,
        },
        /// Confirms a pause.
        Ready,
        /// Discards a tile.
        Discard [alias "d"] {
            /// The tile.
            tile: Tile = TileCode,
            /// Declares Calling.
            calling: bool = Flag,
        },
        /// No claim on the discard (or kong) with this serial.
        NoClaim [alias "n"] {
            /// Serial of the discard.
            discard: i32 = Int,
        },
        /// Claims a pung.
        Pung [alias "p"] {
            /// Serial of the discard (0 after Mah-Jong).
            discard: i32 = Int,
        },
        /// Forms a concealed pung after Mah-Jong.
        FormClosedPung {
            /// Tile of the pung.
            tile: Tile = TileCode,
        },
        /// Claims a kong.
        Kong [alias "k"] {
            /// Serial of the discard.
            discard: i32 = Int,
        },
        /// Declares a concealed kong.
        DeclareClosedKong [alias "ck"] {
            /// Tile of the kong.
            tile: Tile = TileCode,
        },
        /// Adds the drawn tile to an exposed pung.
        AddToPung {
            /// Tile of the pung.
            tile: Tile = TileCode,
        },
        /// Asks whether the hand (plus a tile) is Mah-Jong.
        QueryMahJong {
            /// The extra tile, or `None` for the hand as it is.
            tile: Option<Tile> = MaybeTile,
        },
        /// Claims a chow (or, after Mah-Jong with serial 0, uses the discard in one).
        Chow [alias "c"] {
            /// Serial of the discard.
            discard: i32 = Int,
            /// Where the discard goes in the chow; `None` is `AnyPos`.
            cpos: Option<ChowPosition> = ChowPos,
        },
        /// Forms a concealed chow after Mah-Jong.
        FormClosedChow {
            /// Lowest tile of the chow.
            tile: Tile = TileCode,
        },
        /// Declares the hand void.
        DeclareWashOut,
        /// Claims Mah-Jong.
        MahJong {
            /// Serial of the discard or kong claimed; 0 when going out on one's own draw.
            discard: i32 = Int,
        },
        /// Takes the Mah-Jong discard for a pair.
        Pair,
        /// Forms a concealed pair after Mah-Jong.
        FormClosedPair {
            /// Tile of the pair.
            tile: Tile = TileCode,
        },
        /// Reveals the concealed tiles and asks for the hand to be scored.
        ShowTiles,
        /// Claims the discard to form a special hand.
        SpecialSet,
        /// Forms a special hand from the concealed tiles.
        FormClosedSpecialSet,
        /// Sets (or acknowledges) a player option.
        SetPlayerOption {
            /// The option.
            option: PlayerOption = PlayerOpt,
            /// This acknowledges a server request.
            ack: bool = Flag,
            /// Value of an integer or boolean option.
            value: i32 = Int,
            /// Value of a string option.
            text: String = Text,
        },
        /// Sets a game option.
        SetGameOption {
            /// Option name.
            optname: String = Word16,
            /// Text form of the new value.
            optvalue: String = Text,
        },
        /// Asks for one game option.
        QueryGameOption {
            /// Option name.
            optname: String = Word16,
        },
        /// Asks for all game options.
        ListGameOptions {
            /// Also list disabled options.
            include_disabled: bool = Flag,
        },
        /// Asks for a new manager.
        ChangeManager {
            /// New manager, or 0 for none.
            manager: i32 = Int,
        },
        /// Sends a chat message.
        SendMessage {
            /// Addressee id, or 0 for everybody.
            addressee: i32 = Int,
            /// The message.
            text: String = Text,
        },
        /// Debugging: swap a tile of a player's hand with one from the wall.
        SwapTile [alias "st"] {
            /// Player concerned.
            id: i32 = Int,
            /// Tile to take out of the hand.
            oldtile: Tile = TileCode,
            /// Tile to put in its place.
            newtile: Tile = TileCode,
        },
    }
}
