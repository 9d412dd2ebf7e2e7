//! The classic line decoder: the bytes a classic client sends, read as a
//! session reads them (bounded physical lines joined into message lines),
//! each message parsed as a player's and as the controller's (the import
//! reads both from mj-server logs). A message that parses must print as a
//! line that parses back to the same message, and every reading of a move
//! must give an answer.
#![no_main]

use futures_util::FutureExt;
use libfuzzer_sys::fuzz_target;
use mahjong::classic::lines::{Incoming, MessageReader};
use mahjong::protocol::classic::{ControllerMessage, MoveContext, PlayerMessage};

fuzz_target!(|data: &[u8]| {
    let mut reader = MessageReader::new(data);
    loop {
        // A byte slice never waits: every read is ready at once.
        let next = reader.next().now_or_never().expect("reading a byte slice never waits");
        match next {
            Incoming::End => break,
            Incoming::TooLong => continue,
            Incoming::Message(line) => {
                if let Ok(message) = PlayerMessage::parse(&line) {
                    let printed = message.to_string();
                    assert_eq!(
                        PlayerMessage::parse(&printed).as_ref(),
                        Ok(&message),
                        "{line:?} printed as {printed:?}"
                    );
                    for bits in 0..8u8 {
                        let context = MoveContext {
                            mah_jonging: bits & 1 != 0,
                            chow_position_pending: bits & 2 != 0,
                            claim_window_open: bits & 4 != 0,
                        };
                        let _ = message.to_action(context);
                    }
                }
                if let Ok(message) = ControllerMessage::parse(&line) {
                    let printed = message.to_string();
                    assert_eq!(
                        ControllerMessage::parse(&printed).as_ref(),
                        Ok(&message),
                        "{line:?} printed as {printed:?}"
                    );
                }
            }
        }
    }
});
