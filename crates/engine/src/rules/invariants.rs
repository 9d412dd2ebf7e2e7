//! Checks of properties that must hold after every command: used by the
//! simulator and the property tests to catch engine bugs early.

use super::game::Game;
use super::hand::{Outcome, Phase};
use super::tile::{Tile, TileCounts, Wind};

/// The counts of a whole tile set for each choice of flowers and animals,
/// counted once: the simulator checks them after every command.
fn full_set(flowers: bool, animals: bool) -> &'static TileCounts {
    static SETS: std::sync::LazyLock<[TileCounts; 4]> = std::sync::LazyLock::new(|| {
        [(false, false), (false, true), (true, false), (true, true)].map(|(f, a)| TileCounts::full_set(f, a))
    });
    &SETS[2 * flowers as usize + animals as usize]
}

/// Checks the game's invariants; the error says which one broke.
///
/// - every tile of the set is somewhere, exactly once: in the undrawn wall,
///   a hand, a declared set, among the bonus tiles, on the table, face down
///   in East's tile swap, or (while the winner places it) the discard or
///   robbed tile that gave Mah-Jong;
/// - cumulative scores sum to zero, and so does a settlement;
/// - no hand holds more than 14 concealed tiles.
pub fn check(game: &Game) -> Result<(), String> {
    if game.scores().iter().sum::<i64>() != 0 {
        return Err(format!("cumulative scores {:?} do not sum to zero", game.scores()));
    }
    let Some(h) = game.hand() else { return Ok(()) };
    let mut seen = TileCounts::of(h.wall().undrawn().iter().copied());
    for seat in Wind::ALL {
        let p = h.seat(seat);
        if p.concealed.len() > 14 {
            return Err(format!("{seat:?} holds {} concealed tiles", p.concealed.len()));
        }
        // Plain loops rather than one chained iterator: this runs after
        // every command of every simulated game.
        for &t in p.concealed.iter().chain(&p.bonus) {
            seen.add(t);
        }
        for set in &p.sets {
            for t in set.tiles() {
                seen.add(t);
            }
        }
    }
    for &(_, t) in h.discards() {
        seen.add(t);
    }
    // Tiles lying face down in East's tile swap, not yet received.
    for t in h.swap().into_iter().flat_map(|s| s.in_transit()) {
        seen.add(t);
    }
    if h.phase() == Phase::MahJonging
        && h.discard_use_pending()
        && let Some(t) = h.current_tile()
    {
        seen.add(t);
    }
    // Several winners on one discard each count it in their hand.
    if h.shared_discard_copies() > 0
        && let Some(t) = h.current_tile()
    {
        for _ in 0..h.shared_discard_copies() {
            seen.remove(t);
        }
    }
    let want = full_set(game.options().flowers, game.options().animals);
    // Compared whole first: the face that differs is looked for only when one does.
    if seen != *want
        && let Some(t) = Tile::all_faces().find(|&t| seen.get(t) != want.get(t))
    {
        return Err(format!(
            "hand {}: {} copies of {t} are accounted for instead of {}",
            h.number,
            seen.get(t),
            want.get(t)
        ));
    }
    if let Some(Outcome::Won { settlement, .. }) = h.outcome()
        && settlement.deltas.iter().sum::<i64>() != 0
    {
        return Err(format!("hand {}: settlement {:?} does not sum to zero", h.number, settlement.deltas));
    }
    Ok(())
}
