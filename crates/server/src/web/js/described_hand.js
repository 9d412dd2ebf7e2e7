// The scoring calculator's data: four hands described tile by tile, as people
// playing with real tiles lay them out, and the requests that score them
// (POST /api/v1/score) and settle them (POST /api/v1/settle). Pure data, no
// DOM: `node --test tests/web/` checks it.
//
// Players are numbered by seat wind, East first (0 East .. 3 North): the
// settlement calculator is asked with `east: 0`, so its player numbers are
// the same.

import { isBonus, isSuit, nextInSuit, tileName, sortTiles, WINDS } from './tiles.js';
import { setTiles } from './state.js';

/** The seat winds, East first (the calculator's players). */
export { WINDS };

/**
 * The kinds of set a person may lay down, as the server writes them
 * (docs/protocol.md, "Tile sets"). `play`: declared during play (and laid on
 * the table); otherwise formed from the concealed tiles after Mah-Jong.
 */
export const SET_KINDS = [
  { id: 'chow', label: 'Chow, claimed', kind: 'chow', play: true },
  { id: 'pung', label: 'Pung, claimed', kind: 'pung', play: true },
  { id: 'kong', label: 'Kong, claimed', kind: { kong: { annexed: false } }, play: true },
  { id: 'annexed_kong', label: 'Kong, added to a pung', kind: { kong: { annexed: true } }, play: true },
  { id: 'closed_kong', label: 'Concealed kong', kind: 'closed_kong', play: true },
  { id: 'closed_chow', label: 'Concealed chow', kind: 'closed_chow', play: false },
  { id: 'closed_pung', label: 'Concealed pung', kind: 'closed_pung', play: false },
  { id: 'closed_pair', label: 'Concealed pair', kind: 'closed_pair', play: false },
];

/** Where the winning tile came from, as the server names it, with people's words. */
export const WIN_FROM = [
  { id: 'wall', label: 'Drawn from the wall' },
  { id: 'discard', label: 'Another player\u2019s discard' },
  { id: 'loose', label: 'A loose tile (after a kong)' },
  { id: 'robbed_kong', label: 'Robbing a kong' },
];

/** The set kind entry of a set's `kind` (a string, or `{kong: {annexed}}`). */
export function kindOf(kind) {
  const id = typeof kind === 'string' ? kind : kind?.kong?.annexed ? 'annexed_kong' : 'kong';
  return SET_KINDS.find((k) => k.id === id) ?? null;
}

/** A hand with nothing in it. */
export function newHand() {
  return { sets: [], concealed: [], bonus: [] };
}

/** A calculator with four empty hands: nobody has gone out yet. */
export function newCalculator(preset = 'chinese-classical') {
  return {
    preset,
    options: {},
    prevailing: 'East',
    players: WINDS.map((wind) => ({ wind, mode: 'hand', hand: newHand(), typed: '' })),
    winner: null,
    win: {
      tile: null, from: 'wall', last_tile: false, kong_upon_kong: false, original_call: false,
      no_discard: false, only_east_discarded: false, east_wins_before: 0,
    },
    discarder: null,
    cannon: null,
    given: false,
    extra_hands: 0,
    double_dice: false,
  };
}

/** The tiles a hand holds, counting a kong as three (a winning hand holds 14, a losing one 13). */
export function heldCount(hand) {
  return hand.sets.reduce((n, s) => n + Math.min(3, setTiles(s).length), 0) + hand.concealed.length;
}

/** Every tile of a hand: its sets' tiles, its concealed tiles and its bonus tiles. */
export function tilesOf(hand) {
  return [...hand.sets.flatMap(setTiles), ...hand.concealed, ...hand.bonus];
}

/** How many of each face the hands hold together. */
export function faceCounts(hands) {
  const counts = new Map();
  for (const t of hands.flatMap(tilesOf)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

/** How many of a face the game has: four of each suit and honour tile, one of each bonus tile. */
export function copiesOf(tile) {
  return isBonus(tile) ? 1 : 4;
}

/**
 * Why `tile` cannot be added to hand `i` of `hands` as `target` says
 * (`{to: 'concealed'}`, `{to: 'bonus'}`, `{to: 'set', kind: ID}`), or null
 * when it can. The limits are those of real tiles: no more of a face than
 * the game has, over all four hands, and no more tiles than a hand holds.
 */
export function refusal(hands, i, target, tile) {
  const hand = hands[i];
  let adds = [tile];
  if (target.to === 'bonus') {
    if (!isBonus(tile)) return `${tileName(tile)} is not a flower, season or animal`;
  } else if (isBonus(tile)) {
    return `${tileName(tile)} is set aside as a bonus tile, never kept in the hand`;
  }
  if (target.to === 'set') {
    const kind = SET_KINDS.find((k) => k.id === target.kind);
    if (!kind) return 'choose the kind of set';
    if (hand.sets.length >= 7) return 'a hand has at most 7 sets';
    const set = { kind: kind.kind, tile };
    if (kind.id.endsWith('chow') && !(isSuit(tile) && nextInSuit(tile, 2))) {
      return `no chow starts with ${tileName(tile)}: a chow is named by its lowest tile, 1 to 7 of a suit`;
    }
    adds = setTiles(set);
  }
  if (target.to !== 'bonus' && heldCount(hand) + Math.min(3, adds.length) > 14) {
    return 'a hand holds at most 14 tiles (a kong counted as three)';
  }
  const counts = faceCounts(hands);
  for (const t of new Set(adds)) {
    const wanted = (counts.get(t) ?? 0) + adds.filter((a) => a === t).length;
    if (wanted > copiesOf(t)) {
      return copiesOf(t) === 1 ? `there is only one ${tileName(t)}` : `there are only ${copiesOf(t)} of ${tileName(t)}`;
    }
  }
  return null;
}

/** Hand `hand` with `tile` added as `target` says (a new hand; check `refusal` first). */
export function withTile(hand, target, tile) {
  const next = { sets: [...hand.sets], concealed: [...hand.concealed], bonus: [...hand.bonus] };
  if (target.to === 'bonus') next.bonus.push(tile);
  else if (target.to === 'set') next.sets.push({ kind: SET_KINDS.find((k) => k.id === target.kind).kind, tile });
  else next.concealed = sortTiles([...next.concealed, tile]);
  return next;
}

/** Hand `hand` without item `index` of its `part` ('sets', 'concealed' or 'bonus'). */
export function without(hand, part, index) {
  const next = { sets: [...hand.sets], concealed: [...hand.concealed], bonus: [...hand.bonus] };
  next[part].splice(index, 1);
  return next;
}

/** A set of play: laid on the table during play (what the other players can see). */
export function ofPlay(set) {
  return kindOf(set.kind)?.play ?? false;
}

/** What a described hand still lacks, in words, or null when its count is right. */
export function shortfall(hand, winner) {
  const want = winner ? 14 : 13;
  const n = heldCount(hand);
  if (n === want) return null;
  return n < want ? `${want - n} more tile${want - n === 1 ? '' : 's'} needed (${n} of ${want})`
    : `${n - want} tile${n - want === 1 ? '' : 's'} too many (${n} of ${want})`;
}

/** The faces of a hand's concealed tiles, each once, in order: the winning tile is one of them. */
export function winningTileChoices(hand) {
  return [...new Set(sortTiles(hand.concealed))];
}

/** Does the winner's tile come from another player (who then discarded it, or had the kong robbed)? */
export function fromAnother(calc) {
  return calc.win.from === 'discard' || calc.win.from === 'robbed_kong';
}

/**
 * The body of POST /api/v1/score for player `i`'s described hand. The other
 * hands' sets of play and bonus tiles are in sight on the table.
 */
export function scoreRequest(calc, i) {
  const player = calc.players[i];
  const hand = player.hand;
  const visible = calc.players
    .filter((p, j) => j !== i && p.mode === 'hand')
    .flatMap((p) => [...p.hand.sets.filter(ofPlay).flatMap(setTiles), ...p.hand.bonus]);
  const body = {
    preset: calc.preset,
    options: calc.options,
    seat_wind: player.wind,
    prevailing_wind: calc.prevailing,
    sets: hand.sets.map((s) => ({ kind: s.kind, tile: s.tile })),
    concealed: [...hand.concealed],
    bonus: [...hand.bonus],
  };
  if (visible.length) body.visible = visible;
  if (calc.given) body.arrange = 'given';
  if (calc.extra_hands) body.extra_hands = calc.extra_hands;
  if (calc.winner === i) {
    const w = calc.win;
    body.win = { tile: w.tile, from: w.from };
    for (const flag of ['last_tile', 'kong_upon_kong', 'original_call', 'no_discard', 'only_east_discarded']) {
      if (w[flag]) body.win[flag] = true;
    }
    if (w.east_wins_before) body.win.east_wins_before = w.east_wins_before;
  }
  return body;
}

/**
 * Why hand `i` cannot be sent for scoring yet (in words), or null: the count
 * of tiles, and for the winner its winning tile.
 */
export function notReady(calc, i) {
  const player = calc.players[i];
  if (player.mode !== 'hand') return null;
  const short = shortfall(player.hand, calc.winner === i);
  if (short) return short;
  if (calc.winner === i) {
    if (!calc.win.tile) return 'choose the winning tile';
    if (!player.hand.concealed.includes(calc.win.tile)) return 'the winning tile must be one of the concealed tiles';
  }
  return null;
}

/** A typed score: a whole number from 0 to 100000000, or an error message. */
export function typedScore(text) {
  const t = String(text ?? '').trim();
  if (!/^\d+$/.test(t)) return { error: 'a score is a whole number' };
  const n = Number(t);
  if (n > 100000000) return { error: 'a score is at most 100000000' };
  return { score: n };
}

/**
 * The body of POST /api/v1/settle for the four scores (by player, East
 * first), or `{error}` when the hand cannot be settled as described.
 */
export function settleRequest(calc, scores) {
  if (calc.winner == null) return { error: 'say who went Mah-Jong' };
  if (scores.length !== 4 || scores.some((s) => !Number.isInteger(s) || s < 0)) return { error: 'every player needs a score' };
  const body = { preset: calc.preset, options: calc.options, east: 0, winner: calc.winner, scores: [...scores] };
  if (fromAnother(calc)) {
    if (calc.discarder == null) {
      return { error: calc.win.from === 'discard' ? 'say who discarded the winning tile' : 'say whose kong was robbed' };
    }
    if (calc.discarder === calc.winner) return { error: 'the winner cannot have discarded the winning tile' };
    body.discarder = calc.discarder;
  }
  if (calc.cannon != null) {
    if (calc.cannon === calc.winner) return { error: 'the winner cannot have let off a cannon' };
    body.cannon = calc.cannon;
  }
  if (calc.extra_hands) body.extra_hands = calc.extra_hands;
  if (calc.double_dice) body.double_dice = true;
  return { body };
}

/**
 * Options typed as JSON over the preset: an object of option names, or
 * `{error}`.
 */
export function parseOptions(text) {
  const t = String(text ?? '').trim();
  if (!t) return { options: {} };
  let value;
  try {
    value = JSON.parse(t);
  } catch {
    return { error: 'the options are not JSON: write them as {"Name": value, ...}' };
  }
  if (value == null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: 'the options are a JSON object: {"Name": value, ...}' };
  }
  return { options: value };
}

/**
 * Seed 004's worked sum for Big Three Dragons with a chow (its rules text,
 * on The Three Great Scholars): with 10 points for going out, South goes
 * out on a discard of 4C holding three exposed pungs of dragons and 2C 3C
 * 5B 5B. An example to start from; the server does the scoring.
 */
export function seed004Example() {
  const calc = newCalculator('chinese-classical');
  calc.options = { MahJongScore: 10 };
  calc.winner = 1;
  calc.players[1].hand = {
    sets: [{ kind: 'pung', tile: 'RD' }, { kind: 'pung', tile: 'WD' }, { kind: 'pung', tile: 'GD' }],
    concealed: ['5B', '5B', '2C', '3C', '4C'],
    bonus: [],
  };
  calc.win = { ...calc.win, tile: '4C', from: 'discard' };
  calc.discarder = 2;
  return calc;
}
