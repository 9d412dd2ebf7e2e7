//! Settlement: who pays whom after a hand (seed 004, "Procedure in
//! Settlement"). The winner is paid its score by every loser; losers pay one
//! another the differences of their scores; payments to or from East are
//! doubled; a player who let off a cannon pays everybody's debt.
//!
//! Options: `LosersSettle` (losers pay each other), `EastDoubles`,
//! `DiscDoubles` (the discarder of the winning tile pays double; on a
//! self-drawn win everybody does).

use serde::{Deserialize, Serialize};

use super::options::GameOptions;
use super::scoring::Whence;
use super::tile::Wind;

/// One payment between two seats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payment {
    /// The paying seat.
    pub from: Wind,
    /// The receiving seat.
    pub to: Wind,
    /// The amount (never negative).
    pub amount: i64,
    /// When a cannon pays for another loser: that loser.
    pub on_behalf_of: Option<Wind>,
}

/// The result of settling a hand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settlement {
    /// Change of each seat's score, indexed East, South, West, North. Sums to 0.
    pub deltas: [i64; 4],
    /// The payments, in the order they are listed.
    pub payments: Vec<Payment>,
    /// The seat that let off a cannon, if any.
    pub cannon: Option<Wind>,
    /// The settlement text, one line per item, as mj-server prints it.
    pub lines: Vec<String>,
}

/// What settlement needs to know about a finished hand.
#[derive(Clone, Copy, Debug)]
pub struct SettlementInput<'a> {
    /// The game options.
    pub options: &'a GameOptions,
    /// Each seat's hand score, indexed East..North.
    pub scores: [i64; 4],
    /// The winner's seat.
    pub winner: Wind,
    /// Where the winning tile came from.
    pub whence: Whence,
    /// The seat that supplied the winning tile (discarder or robbed konger).
    pub supplier: Option<Wind>,
    /// The seat liable for letting off a cannon.
    pub cannon: Option<Wind>,
}

/// Settles a hand with a winner.
pub fn settle(input: &SettlementInput<'_>) -> Settlement {
    let opts = input.options;
    let w = input.winner;
    let mut deltas = [0i64; 4];
    let mut payments = Vec::new();
    let mut lines = Vec::new();
    let losers: Vec<Wind> = Wind::ALL.into_iter().filter(|&s| s != w).collect();
    let involves_east = |a: Wind, b: Wind| a == Wind::East || b == Wind::East;

    if let Some(c) = input.cannon {
        lines.push(format!("{} let off a cannon", c.padded_name()));
        lines.push(String::new());
    }
    for &loser in &losers {
        let mut m = input.scores[w.index()];
        if opts.east_doubles && involves_east(loser, w) {
            m *= 2;
        }
        // Singaporean style: the discarder pays double; on a win not from a
        // discard (wall, loose tile, robbed kong) everybody does.
        if opts.disc_doubles && (input.whence != Whence::Discard || Some(loser) == input.supplier) {
            m *= 2;
        }
        let payer = input.cannon.unwrap_or(loser);
        deltas[w.index()] += m;
        deltas[payer.index()] -= m;
        let on_behalf_of = (payer != loser).then_some(loser);
        payments.push(Payment { from: payer, to: w, amount: m, on_behalf_of });
        let mut line = format!("{} pays {}", payer.padded_name(), w.padded_name());
        if let Some(l) = on_behalf_of {
            line.push_str(&format!(" (for {})", l.padded_name()));
        }
        line.push_str(&format!(" {m:>5}"));
        lines.push(line);
    }
    lines.push(format!("{} GAINS {:>5}", w.padded_name(), deltas[w.index()]));
    lines.push(String::new());

    for (k, &i) in losers.iter().enumerate() {
        for &j in &losers[k + 1..] {
            if input.cannon.is_some() || !opts.losers_settle {
                continue;
            }
            let mut m = input.scores[i.index()] - input.scores[j.index()];
            if opts.east_doubles && involves_east(i, j) {
                m *= 2;
            }
            deltas[i.index()] += m;
            deltas[j.index()] -= m;
            if m > 0 {
                payments.push(Payment { from: j, to: i, amount: m, on_behalf_of: None });
                lines.push(format!("{} pays {} {m:>5}", j.padded_name(), i.padded_name()));
            } else if m < 0 {
                payments.push(Payment { from: i, to: j, amount: -m, on_behalf_of: None });
                lines.push(format!("{} pays {} {:>5}", i.padded_name(), j.padded_name(), -m));
            } else {
                lines.push(format!("{} and {} are even", i.padded_name(), j.padded_name()));
            }
        }
        let d = deltas[i.index()];
        lines.push(format!("{} {} {:>5}", i.padded_name(), if d >= 0 { "GAINS" } else { "LOSES" }, d.abs()));
        lines.push(String::new());
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    Settlement { deltas, payments, cannon: input.cannon, lines }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(opts: &GameOptions, scores: [i64; 4], winner: Wind) -> SettlementInput<'_> {
        SettlementInput { options: opts, scores, winner, whence: Whence::Wall, supplier: None, cannon: None }
    }

    #[test]
    fn east_wins_first_hand_of_the_corpus() {
        // s0001-default, hand 1: East wins with 36, the others have 8, 4, 4.
        let o = GameOptions::default();
        let s = settle(&input(&o, [36, 8, 4, 4], Wind::East));
        assert_eq!(s.deltas, [216, -64, -76, -76]);
        assert_eq!(
            s.lines,
            [
                "South pays East     72",
                "West  pays East     72",
                "North pays East     72",
                "East  GAINS   216",
                "",
                "West  pays South     4",
                "North pays South     4",
                "South LOSES    64",
                "",
                "West  and North are even",
                "West  LOSES    76",
                "",
                "North LOSES    76",
            ]
        );
    }

    #[test]
    fn cannon_pays_for_everyone() {
        let o = GameOptions::default();
        let mut i = input(&o, [10, 100, 30, 2], Wind::South);
        i.whence = Whence::Discard;
        i.supplier = Some(Wind::West);
        i.cannon = Some(Wind::West);
        let s = settle(&i);
        assert_eq!(s.deltas, [0, 400, -400, 0]);
        assert_eq!(s.lines[0], "West  let off a cannon");
        assert_eq!(s.lines[2], "West  pays South (for East )   200");
        assert_eq!(s.deltas.iter().sum::<i64>(), 0);
    }

    #[test]
    fn discarder_doubles_and_no_loser_settlement() {
        let o = GameOptions { disc_doubles: true, east_doubles: false, losers_settle: false, ..GameOptions::default() };
        let mut i = input(&o, [10, 20, 30, 40], Wind::North);
        i.whence = Whence::Discard;
        i.supplier = Some(Wind::South);
        let s = settle(&i);
        assert_eq!(s.deltas, [-40, -80, -40, 160]);
        let mut i2 = i;
        i2.whence = Whence::Wall;
        assert_eq!(settle(&i2).deltas, [-80, -80, -80, 240]);
    }
}
