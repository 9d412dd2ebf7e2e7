//! The WebSocket JSON decoder: a text frame read as a client's message, as
//! the WebSocket session reads it (strictly: no arrays for objects, no NUL).
//! A message that is read must write back as JSON that reads as the same
//! message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mahjong::protocol::json;
use mahjong::protocol::ws::ClientMessage;

fuzz_target!(|data: &[u8]| {
    // A WebSocket text frame is UTF-8 (tungstenite refuses anything else).
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(message) = json::from_str::<ClientMessage>(text) {
        let written = serde_json::to_string(&message).expect("a client message serialises");
        let again = json::from_str::<ClientMessage>(&written).expect("a written message reads back");
        assert_eq!(again, message, "{text:?} wrote as {written:?}");
    }
});
