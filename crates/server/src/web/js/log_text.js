// The game log's sentences: one line of plain English for each event a
// player or spectator sees, in the second person for the viewer ("You
// discarded 5 Bamboo") and the third for everyone else ("Ann discarded 5
// Bamboo"), with the verb agreeing ("You are East", "Ann is East"). Pure:
// no DOM and no state kept, so `node --test` checks every sentence form in
// both persons (tests/web/log_text.test.mjs).

import { tileName } from './tiles.js';

const POSITION_WORDS = { Lower: 'lowest', Middle: 'middle', Upper: 'highest' };

const CLAIM_PURPOSE = { pung: 'for a pung', kong: 'for a kong', mah_jong: 'to go Mah-Jong' };

/** What a claim is for, after "claimed the discard": "for a chow", "to go Mah-Jong". */
export function claimPurpose(claim) {
  if (typeof claim === 'object' && claim && 'chow' in claim) return 'for a chow';
  return CLAIM_PURPOSE[claim] ?? `(${String(claim)})`;
}

/** "1 tile", "2 tiles". */
export function count(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The words for the people at a table seen from `viewer` (a seat, or null
 * for a spectator); `name(p)` is seat `p`'s name.
 */
export function persons(viewer, name) {
  const you = (p) => viewer != null && p === viewer;
  return {
    /** The subject at the start of a sentence: "You" or the name. */
    subject: (p) => (you(p) ? 'You' : name(p)),
    /** As an object, mid-sentence: "you" or the name. */
    object: (p) => (you(p) ? 'you' : name(p)),
    /** The possessive at the start of a sentence: "Your" or "Ann's". */
    whose: (p) => (you(p) ? 'Your' : `${name(p)}'s`),
    /** "are" for the viewer, "is" for anyone else. */
    be: (p) => (you(p) ? 'are' : 'is'),
    /** The present tense: `plain` for the viewer ("manage"), `third` otherwise ("manages"). */
    verb: (p, plain, third) => (you(p) ? plain : third),
  };
}

/** A list in words: "Ann", "Ann and Bo", "Ann, Bo and you". */
export function listed(words) {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/**
 * The log line for event `e` (the `event` of a stream message), or null for
 * an event the log does not show. `ctx`: `viewer` (seat or null), `name(p)`,
 * and `everything` (a replay of a finished game, which sees every tile: each
 * draw and pass gets its line too).
 */
export function describeEvent(e, ctx) {
  const { subject: S, object: O, whose, be, verb } = persons(ctx.viewer, ctx.name);
  const t = (tile) => (tile ? tileName(tile) : 'a tile');
  const mine = (p) => ctx.viewer != null && p === ctx.viewer;
  switch (e.type) {
    case 'seat_taken':
      return `${mine(e.seat) ? 'You' : e.name} sat in seat ${e.seat + 1}${e.robot ? ' (a robot)' : ''}.`;
    case 'seat_left': return `Seat ${e.seat + 1} is free.`;
    case 'disconnected': return mine(e.seat) ? null : `${S(e.seat)} lost the connection.`;
    case 'connected': return mine(e.seat) ? null : `${S(e.seat)} joined the table.`;
    case 'reconnected': return mine(e.seat) ? null : `${S(e.seat)} ${be(e.seat)} back.`;
    case 'manager': return e.seat == null ? 'Nobody manages the game.' : `${S(e.seat)} ${verb(e.seat, 'manage', 'manages')} the game.`;
    case 'option_changed': return `Option ${ctx.optionLabel?.(e.name) ?? e.name} set to ${e.value}.`;
    case 'game_started': return 'The game has started.';
    case 'waiting_for_ready': return e.seats.length ? `Waiting for ${listed(e.seats.map(O))} to be ready.` : null;
    case 'paused': return `${S(e.seat)} paused the game${e.reason ? `: ${e.reason}` : ''}.`;
    case 'resumed': return 'Play resumes.';
    case 'pause_changed': return `Pause between moves: ${e.deciseconds / 10} s.`;
    case 'chat': return null;
    case 'penalty': return `${mine(e.seat) ? 'You were' : `${ctx.name(e.seat)} was`} given a penalty of ${count(e.points, 'point')} for leaving.`;
    case 'closed': return `The table has closed: ${e.reason}.`;
    case 'hand_started': return `Hand ${e.hand}, ${e.round} round: ${S(e.east)} ${be(e.east)} East.`;
    case 'drew':
      if (!(mine(e.player) || ctx.everything)) return null;
      return e.tile ? `${S(e.player)} drew ${t(e.tile)}${e.loose ? ' (a loose tile)' : ''}.` : `${S(e.player)} drew a tile.`;
    case 'declared_bonus': return `${S(e.player)} declared ${t(e.tile)}.`;
    case 'finished_declaring': return `${S(e.player)} finished declaring.`;
    case 'play_started': return `Play starts: ${S(e.east)} ${verb(e.east, 'discard', 'discards')} first.`;
    case 'swap_started': return 'East chooses how many tiles to swap.';
    case 'swap_chosen': return e.lots ? `East swaps ${count(e.lots, 'lot')}.` : 'East swaps no tiles.';
    case 'lot_passed': return `Tiles passed ${e.direction}.`;
    case 'tile_passed': return e.tile ? `${S(e.player)} passed ${t(e.tile)} face down.` : null;
    case 'tile_received': return `${S(e.player)} received ${t(e.tile)}${e.from != null ? ` from ${O(e.from)}` : ''}.`;
    case 'discarded': return `${S(e.player)} discarded ${t(e.tile)}${e.calling ? ` and ${verb(e.player, 'call', 'calls')} (one tile from Mah-Jong)` : ''}.`;
    case 'passed': return ctx.everything ? `${S(e.player)} passed${e.timeout ? ' (time ran out)' : ''}.` : null;
    case 'claimed': return `${S(e.player)} claimed the discard ${claimPurpose(e.claim)}.`;
    case 'claim_denied': return `${mine(e.player) ? 'Your' : `${ctx.name(e.player)}'s`} claim was denied: ${e.reason}.`;
    case 'chow_position_needed': return mine(e.player) ? `Say which chow ${t(e.tile)} makes.` : `${S(e.player)} ${verb(e.player, 'choose', 'chooses')} a chow.`;
    case 'chowed': return `${S(e.player)} chowed ${t(e.tile)}${e.position ? ` as the ${POSITION_WORDS[e.position]} tile` : ''}.`;
    case 'punged': return `${S(e.player)} punged ${t(e.tile)}.`;
    case 'konged': return `${S(e.player)} konged ${t(e.tile)}.`;
    case 'paired': return `${S(e.player)} paired ${t(e.tile)}.`;
    case 'declared_closed_kong': return `${S(e.player)} declared a concealed kong of ${t(e.tile)}.`;
    case 'added_to_pung': return `${S(e.player)} added ${t(e.tile)} to a pung, making a kong.`;
    case 'robbed_kong': return `${S(e.player)} robbed the kong with ${t(e.tile)}!`;
    case 'dangerous_discard': return `${whose(e.player)} discard was dangerous${e.no_choice ? ' (there was no other choice)' : ''}.`;
    case 'mah_jong': return `${S(e.player)} went Mah-Jong!`;
    case 'declared_special_set': return `${S(e.player)} declared a special hand.`;
    case 'formed_closed_set': return `${S(e.player)} laid out a concealed set.`;
    case 'showed_tiles': return `${S(e.player)} showed ${count(e.tiles.length, 'tile')}.`;
    case 'hand_scored': return `${S(e.player)} scored ${count(e.score.score, 'point')}.`;
    case 'settled': return `Settled: ${[0, 1, 2, 3].map((p) => `${O(p)} ${e.deltas[p] > 0 ? '+' : ''}${e.deltas[p]}`).join(', ')}.`;
    case 'washed_out': return `The hand is washed out (${e.reason}).`;
    case 'game_over': return `Game over. Final scores: ${[0, 1, 2, 3].map((p) => `${O(p)} ${e.scores[p]}`).join(', ')}.`;
    default: return null;
  }
}

/**
 * Counts a hand's draws per player in `draws` (cleared when a hand starts):
 * true for the first 13 of each, the deal, which the log leaves out (a
 * flower's replacement, East's 14th and every later draw are shown).
 */
export function dealtTile(draws, e) {
  if (e.type === 'hand_started') draws.clear();
  if (e.type !== 'drew') return false;
  const n = (draws.get(e.player) ?? 0) + 1;
  draws.set(e.player, n);
  return n <= 13;
}
