//! The game-file reader: a game file (JSON) or an mj-server log, read and
//! checked as an import reads it (`mahjong-server import`, the REST imports):
//! parsed, replayed through the engine, checked event by event. Anything may
//! be refused; nothing may panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mahjong::game_file::read_any;

fuzz_target!(|data: &[u8]| {
    // The REST import of a log reads bytes lossily; of a game file, UTF-8 only.
    let text = String::from_utf8_lossy(data);
    let _ = read_any(&text, 0);
});
