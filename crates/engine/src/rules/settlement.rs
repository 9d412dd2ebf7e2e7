//! Settlement: who pays whom after a hand (seed 004, "Procedure in
//! Settlement", and the variants of seeds 000-003).
//!
//! In the classical procedure (mj-server's defaults) the winner is paid its
//! score by every loser; losers pay one another the differences of their
//! scores; payments to or from East are doubled; a player who let off a
//! cannon pays everybody's debt. The options vary each step:
//!
//! - the scores: the limit, `DoubleDice` (a double roll doubles every score,
//!   so the limit too), rounding to `RoundUnit` (`RoundMode`, `RoundSixUp`);
//! - the winner's payments: `EastDoubles`, `DiscDoubles`, `DiscarderPays`,
//!   several winners on one discard (`MultipleWinners`), each paid as if alone;
//! - the losers' payments: `LosersSettle`, `PaymentItemisation`, `WashBelow`;
//! - `RoundAtPayTime`: rounding each payment after its doubles instead of the
//!   scores; a player paying several shares to one winner pays their rounded sum;
//! - the dealer's extra-hand bonus (`DealerBonus` and its options), paid last,
//!   neither doubled, limited nor rounded.
//!
//! [`settle`] is the one settlement function: the engine calls it after every
//! won hand, and the `settle` calculator (see [`super::calculator`]) calls it
//! for any scores.

use serde::{Deserialize, Serialize};

use super::options::{DiscarderPays, GameOptions, Itemisation, round_to};
use super::tile::Wind;

/// What a payment is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PaymentKind {
    /// A loser's share of the winner's score.
    Winner,
    /// Between losers.
    Losers,
    /// The bonus for the dealer's extra hands.
    DealerBonus,
}

/// One payment between two seats.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Payment {
    /// The paying seat.
    pub from: Wind,
    /// The receiving seat.
    pub to: Wind,
    /// The amount (never negative).
    pub amount: i64,
    /// What it is for.
    pub kind: PaymentKind,
    /// The other losers whose shares the payer pays (letting off a cannon, or
    /// the discarder paying for all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_behalf_of: Vec<Wind>,
}

/// The result of settling a hand.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Settlement {
    /// Change of each seat's score, indexed East, South, West, North. Sums to 0.
    pub deltas: [i64; 4],
    /// The scores as settled: after the limit, double dice and any rounding
    /// of the scores (not the rounding of payments).
    pub scores: [i64; 4],
    /// The payments, in the order they are listed.
    pub payments: Vec<Payment>,
    /// The seat that let off a cannon, if any.
    pub cannon: Option<Wind>,
    /// The settlement text, one line per item (as mj-server prints it, for
    /// mj-server's options).
    pub lines: Vec<String>,
}

/// What settlement needs to know about a finished hand.
#[derive(Clone, Copy, Debug)]
pub struct SettlementInput<'a> {
    /// The game options.
    pub options: &'a GameOptions,
    /// Each seat's hand score, indexed East..North. The limit is applied here
    /// (again, for the engine's scores; it changes nothing then).
    pub scores: [i64; 4],
    /// The winners: one, or with `MultipleWinners` several on one discard.
    pub winners: &'a [Wind],
    /// The seat that supplied the winning tile (the discarder, or the konger
    /// whose kong was robbed); `None` for a self-drawn win.
    pub discarder: Option<Wind>,
    /// The winning tile was taken by robbing a kong. mj-server's `DiscDoubles`
    /// treats that as "not from a discard", so everybody pays double.
    pub robbed_kong: bool,
    /// The seat liable for letting off a cannon.
    pub cannon: Option<Wind>,
    /// The number of this hand among the dealer's extra hands (0 = not one).
    pub extra_hands: u32,
    /// The dice rolled a double this hand (counts only with `DoubleDice`).
    pub double_dice: bool,
}

/// A hand's score as it is settled: capped at the limit, doubled by double
/// dice (which doubles the limit too), and rounded unless rounding happens at
/// pay time.
pub fn settled_score(options: &GameOptions, score: i64, double_dice: bool) -> i64 {
    let mut s = if options.no_limit { score } else { score.min(options.score_limit as i64) };
    if double_dice && options.double_dice {
        s *= 2;
    }
    if !options.round_at_pay_time {
        s = round_to(s, options.round_unit as i64, options.round_mode, options.round_six_up);
    }
    s
}

/// Builds the payments, the deltas and the text together.
struct Ledger<'a> {
    options: &'a GameOptions,
    deltas: [i64; 4],
    payments: Vec<Payment>,
    lines: Vec<String>,
}

impl Ledger<'_> {
    /// A payment as listed: rounded if rounding happens at pay time.
    fn pay(&mut self, from: Wind, to: Wind, amount: i64, kind: PaymentKind, on_behalf_of: Vec<Wind>) {
        let o = self.options;
        let amount = if o.round_at_pay_time && kind != PaymentKind::DealerBonus {
            round_to(amount, o.round_unit as i64, o.round_mode, o.round_six_up)
        } else {
            amount
        };
        let mut line = format!("{} pays {}", from.padded_name(), to.padded_name());
        match on_behalf_of.as_slice() {
            [] => {}
            [one] => line.push_str(&format!(" (for {})", one.padded_name())),
            many => {
                let names: Vec<&str> = many.iter().map(|w| w.padded_name().trim_end()).collect();
                line.push_str(&format!(" (for {})", names.join(", ")));
            }
        }
        line.push_str(&format!(" {amount:>5}"));
        if kind == PaymentKind::DealerBonus {
            line.push_str(" dealer bonus");
        }
        self.lines.push(line);
        self.deltas[to.index()] += amount;
        self.deltas[from.index()] -= amount;
        self.payments.push(Payment { from, to, amount, kind, on_behalf_of });
    }

    fn balance_line(&mut self, seat: Wind) {
        let d = self.deltas[seat.index()];
        let word = if d >= 0 { "GAINS" } else { "LOSES" };
        self.lines.push(format!("{} {word} {:>5}", seat.padded_name(), d.abs()));
        self.lines.push(String::new());
    }
}

/// One loser's share of a winner's score, and who pays it.
struct Share {
    loser: Wind,
    payer: Wind,
    amount: i64,
}

/// Settles a hand with one or more winners.
pub fn settle(input: &SettlementInput<'_>) -> Settlement {
    let opts = input.options;
    let scores = input.scores.map(|s| settled_score(opts, s, input.double_dice));
    let mut ledger = Ledger { options: opts, deltas: [0; 4], payments: Vec::new(), lines: Vec::new() };
    let losers: Vec<Wind> = Wind::ALL.into_iter().filter(|s| !input.winners.contains(s)).collect();
    let east_double = |a: Wind, b: Wind| if opts.east_doubles && (a == Wind::East || b == Wind::East) { 2 } else { 1 };
    let on_discard = input.discarder.filter(|_| !input.robbed_kong);

    if let Some(c) = input.cannon {
        ledger.lines.push(format!("{} let off a cannon", c.padded_name()));
        ledger.lines.push(String::new());
    }
    for &w in input.winners {
        // Each winner is paid as if it had won alone (seed 002): by all three
        // others, another winner included.
        let others: Vec<Wind> = Wind::ALL.into_iter().filter(|&s| s != w).collect();
        let mut shares = Vec::with_capacity(3);
        for &loser in &others {
            let mut amount = scores[w.index()] * east_double(loser, w);
            // Singaporean style: the discarder pays double; on a win not from a
            // discard (wall, loose tile, robbed kong) everybody does.
            if opts.disc_doubles && (on_discard.is_none() || Some(loser) == on_discard) {
                amount *= 2;
            }
            let payer = match (input.cannon, input.discarder, opts.discarder_pays) {
                (Some(c), _, _) => c,
                (None, Some(d), DiscarderPays::ForAll) => d,
                (None, Some(d), DiscarderPays::Alone) if loser != d => continue,
                _ => loser,
            };
            shares.push(Share { loser, payer, amount });
        }
        if opts.round_at_pay_time {
            // One payment per payer: rounding the sum, not each share (seed 000).
            let mut payers: Vec<Wind> = shares.iter().map(|s| s.payer).collect();
            payers.dedup();
            for payer in payers {
                let mine = shares.iter().filter(|s| s.payer == payer);
                let amount = mine.clone().map(|s| s.amount).sum();
                let others = mine.filter(|s| s.loser != payer).map(|s| s.loser).collect();
                ledger.pay(payer, w, amount, PaymentKind::Winner, others);
            }
        } else {
            for s in &shares {
                let others = if s.payer == s.loser { vec![] } else { vec![s.loser] };
                ledger.pay(s.payer, w, s.amount, PaymentKind::Winner, others);
            }
        }
        dealer_bonus(input, w, &others, &mut ledger);
        ledger.balance_line(w);
    }

    for (k, &i) in losers.iter().enumerate() {
        if input.cannon.is_none() && opts.losers_settle {
            for &j in &losers[k + 1..] {
                settle_losers(&mut ledger, i, j, scores, east_double(i, j));
            }
        }
        ledger.balance_line(i);
    }
    let mut lines = ledger.lines;
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    Settlement { deltas: ledger.deltas, scores, payments: ledger.payments, cannon: input.cannon, lines }
}

/// Two losers settle: the difference of their scores, or (seed 001's other
/// itemisation) each one's score; either way the balance is the difference.
fn settle_losers(ledger: &mut Ledger<'_>, i: Wind, j: Wind, scores: [i64; 4], mult: i64) {
    let (si, sj) = (scores[i.index()], scores[j.index()]);
    let diff = si - sj;
    let wash = ledger.options.wash_below as i64;
    if si == sj || diff.abs() < wash {
        ledger.lines.push(format!("{} and {} are even", i.padded_name(), j.padded_name()));
        return;
    }
    match ledger.options.payment_itemisation {
        Itemisation::Differences if diff > 0 => ledger.pay(j, i, diff * mult, PaymentKind::Losers, vec![]),
        Itemisation::Differences => ledger.pay(i, j, -diff * mult, PaymentKind::Losers, vec![]),
        Itemisation::Scores => {
            if si > 0 {
                ledger.pay(j, i, si * mult, PaymentKind::Losers, vec![]);
            }
            if sj > 0 {
                ledger.pay(i, j, sj * mult, PaymentKind::Losers, vec![]);
            }
        }
    }
}

/// The bonus for the dealer's extra hands (seed 002), paid to winner `w`.
fn dealer_bonus(input: &SettlementInput<'_>, w: Wind, losers: &[Wind], ledger: &mut Ledger<'_>) {
    let opts = input.options;
    let bonus = i64::from(opts.dealer_bonus) * i64::from(input.extra_hands);
    if bonus == 0 {
        return;
    }
    // Who pays, and for how many losers.
    let payers: Vec<(Wind, Vec<Wind>)> = if opts.dealer_bonus_taiwan {
        match (w == Wind::East, input.discarder) {
            (true, None) => losers.iter().map(|&l| (l, vec![])).collect(),
            (true, Some(d)) => vec![(d, vec![])],
            (false, None) | (false, Some(Wind::East)) => vec![(Wind::East, vec![])],
            (false, Some(_)) => vec![],
        }
    } else if w != Wind::East && !opts.dealer_bonus_any_winner {
        vec![]
    } else {
        match (input.cannon, input.discarder, opts.discarder_pays) {
            (Some(c), _, _) => vec![(c, losers.iter().copied().filter(|&l| l != c).collect())],
            (None, Some(d), DiscarderPays::ForAll) => vec![(d, losers.iter().copied().filter(|&l| l != d).collect())],
            (None, Some(d), DiscarderPays::Alone) => vec![(d, vec![])],
            _ => losers.iter().map(|&l| (l, vec![])).collect(),
        }
    };
    for (payer, others) in payers {
        let amount = bonus * (1 + others.len() as i64);
        ledger.pay(payer, w, amount, PaymentKind::DealerBonus, others);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(opts: &'a GameOptions, scores: [i64; 4], winner: &'a [Wind]) -> SettlementInput<'a> {
        SettlementInput {
            options: opts,
            scores,
            winners: winner,
            discarder: None,
            robbed_kong: false,
            cannon: None,
            extra_hands: 0,
            double_dice: false,
        }
    }

    #[test]
    fn east_wins_first_hand_of_the_corpus() {
        // s0001-default, hand 1: East wins with 36, the others have 8, 4, 4.
        let o = GameOptions::default();
        let s = settle(&input(&o, [36, 8, 4, 4], &[Wind::East]));
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
        let mut i = input(&o, [10, 100, 30, 2], &[Wind::South]);
        i.discarder = Some(Wind::West);
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
        let mut i = input(&o, [10, 20, 30, 40], &[Wind::North]);
        i.discarder = Some(Wind::South);
        let s = settle(&i);
        assert_eq!(s.deltas, [-40, -80, -40, 160]);
        let mut i2 = i;
        i2.discarder = None;
        assert_eq!(settle(&i2).deltas, [-80, -80, -80, 240]);
    }
}
