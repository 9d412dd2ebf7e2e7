// crates/server/src/web/js/log_text.js: every sentence of the game log, in
// the second person (the viewer's own moves) and the third (anyone else's),
// reads as English: the verb agrees ("You are East", "Ann is East"), counts
// agree ("1 tile", "2 tiles"), no "You is", no "You's", no stray "undefined".

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { describeEvent, listed, count, claimPurpose, dealtTile } from '../../crates/server/src/web/js/log_text.js';

const NAMES = ['Ann', 'Bo', 'Cy', 'Di'];
const ctx = (viewer) => ({ viewer, name: (p) => NAMES[p] });
const score = (n) => ({ score: n, points: n, doubles: 0, items: [], lines: [] });

// One event of each type the log shows, about player/seat 0.
const EVENTS = [
  { type: 'seat_taken', seat: 0, name: 'Ann' },
  { type: 'seat_taken', seat: 0, name: 'Ann', robot: 'default' },
  { type: 'seat_left', seat: 0 },
  { type: 'disconnected', seat: 0 },
  { type: 'connected', seat: 0 },
  { type: 'reconnected', seat: 0 },
  { type: 'manager', seat: 0 },
  { type: 'manager', seat: null },
  { type: 'option_changed', name: 'NumRounds', value: 1 },
  { type: 'game_started' },
  { type: 'waiting_for_ready', seats: [0] },
  { type: 'waiting_for_ready', seats: [0, 1, 2] },
  { type: 'paused', seat: 0, reason: 'tea' },
  { type: 'paused', seat: 0, reason: '' },
  { type: 'resumed' },
  { type: 'pause_changed', deciseconds: 15 },
  { type: 'penalty', seat: 0, points: 1 },
  { type: 'penalty', seat: 0, points: 20 },
  { type: 'closed', reason: 'an admin closed it' },
  { type: 'hand_started', hand: 1, round: 'East', east: 0, extra_hands: 0 },
  { type: 'drew', player: 0, tile: '5B', loose: false },
  { type: 'drew', player: 0, tile: '5B', loose: true },
  { type: 'declared_bonus', player: 0, tile: '1F' },
  { type: 'finished_declaring', player: 0 },
  { type: 'play_started', east: 0 },
  { type: 'swap_started' },
  { type: 'swap_chosen', lots: 1 },
  { type: 'swap_chosen', lots: 2 },
  { type: 'swap_chosen', lots: 0 },
  { type: 'lot_passed', direction: 'left' },
  { type: 'tile_passed', player: 0, lot: 1, tile: '3D' },
  { type: 'tile_received', player: 0, from: 2, lot: 1, tile: '3D' },
  { type: 'passed', player: 0, discard: 4, timeout: false },
  { type: 'passed', player: 0, discard: 4, timeout: true },
  { type: 'drew', player: 0, tile: null, loose: false },
  { type: 'discarded', player: 0, tile: '9D', discard: 4, calling: false },
  { type: 'discarded', player: 0, tile: '9D', discard: 4, calling: true },
  { type: 'claimed', player: 0, discard: 4, claim: 'pung' },
  { type: 'claimed', player: 0, discard: 4, claim: { chow: null } },
  { type: 'claimed', player: 0, discard: 4, claim: 'mah_jong' },
  { type: 'claim_denied', player: 0, reason: 'someone else claimed Mah-Jong' },
  { type: 'chow_position_needed', player: 0, tile: '4C' },
  { type: 'chowed', player: 0, tile: '4C', position: 'Middle' },
  { type: 'punged', player: 0, tile: 'RD' },
  { type: 'konged', player: 0, tile: 'RD' },
  { type: 'paired', player: 0, tile: 'EW' },
  { type: 'declared_closed_kong', player: 0, tile: '2B', discard: 9 },
  { type: 'added_to_pung', player: 0, tile: 'RD', discard: 9 },
  { type: 'robbed_kong', player: 0, tile: 'RD' },
  { type: 'dangerous_discard', player: 0, no_choice: false },
  { type: 'dangerous_discard', player: 0, no_choice: true },
  { type: 'mah_jong', player: 0, tile: null },
  { type: 'declared_special_set', player: 0, tiles: [] },
  { type: 'formed_closed_set', player: 0, set: { pung: 'RD' } },
  { type: 'showed_tiles', player: 0, tiles: ['1B'] },
  { type: 'showed_tiles', player: 0, tiles: ['1B', '2B', '3B', '4B'] },
  { type: 'hand_scored', player: 0, score: score(1) },
  { type: 'hand_scored', player: 0, score: score(24) },
  { type: 'settled', deltas: [30, -10, -10, -10], scores: [1030, 990, 990, 990], settlement: {} },
  { type: 'washed_out', reason: 'wall exhausted' },
  { type: 'game_over', scores: [1030, 990, 990, 990] },
];

// Sentences that would read wrongly in one person or the other.
const WRONG = [/\bYou is\b/, /\byou is\b/, /\bYou's\b/, /\byou's\b/, /\bYou was\b/, /\bYou manages\b/, /\bYou discards\b/,
  /\bYou calls\b/, /\bYou chooses\b/, /\bAnn are\b/, /\bAnn manage\b/, /\b1 tiles\b/, /\b1 points\b/, /\b1 lots\b/,
  /\bfor You\b/, /\bundefined\b/, /\bnull\b/, /\[object/, /\bNaN\b/, /\s\./, /\.\./];

for (const [viewer, everything] of [[0, false], [1, false], [null, false], [null, true]]) {
  const person = viewer === 0 ? 'second person' : viewer === 1 ? 'third person, seen by a player'
    : everything ? 'third person, in a replay that sees everything' : 'third person, seen by a spectator';
  test(`every sentence reads well in the ${person}`, () => {
    for (const e of EVENTS) {
      const line = describeEvent(e, { ...ctx(viewer), everything });
      if (line == null) continue;
      assert.match(line, /^[A-Z]/, `${e.type}: starts with a capital: ${line}`);
      assert.match(line, /[.!]$/, `${e.type}: ends a sentence: ${line}`);
      for (const bad of WRONG) assert.doesNotMatch(line, bad, `${e.type}: ${line}`);
    }
  });
}

test('the viewer is "You", with the verb in agreement; the others by name', () => {
  const hand = { type: 'hand_started', hand: 3, round: 'South', east: 0 };
  assert.equal(describeEvent(hand, ctx(0)), 'Hand 3, South round: You are East.');
  assert.equal(describeEvent(hand, ctx(1)), 'Hand 3, South round: Ann is East.');
  const manager = { type: 'manager', seat: 0 };
  assert.equal(describeEvent(manager, ctx(0)), 'You manage the game.');
  assert.equal(describeEvent(manager, ctx(null)), 'Ann manages the game.');
  const play = { type: 'play_started', east: 0 };
  assert.equal(describeEvent(play, ctx(0)), 'Play starts: You discard first.');
  assert.equal(describeEvent(play, ctx(2)), 'Play starts: Ann discards first.');
  const danger = { type: 'dangerous_discard', player: 0, no_choice: false };
  assert.equal(describeEvent(danger, ctx(0)), 'Your discard was dangerous.');
  assert.equal(describeEvent(danger, ctx(3)), "Ann's discard was dangerous.");
  const waiting = { type: 'waiting_for_ready', seats: [1, 0] };
  assert.equal(describeEvent(waiting, ctx(0)), 'Waiting for Bo and you to be ready.');
  assert.equal(describeEvent(waiting, ctx(null)), 'Waiting for Bo and Ann to be ready.');
  const back = { type: 'reconnected', seat: 0 };
  assert.equal(describeEvent(back, ctx(1)), 'Ann is back.');
  assert.equal(describeEvent(back, ctx(0)), null, 'nobody is told of their own connection');
  assert.equal(describeEvent({ type: 'connected', seat: 2 }, ctx(0)), 'Cy joined the table.');
  const claim = { type: 'claimed', player: 0, discard: 4, claim: 'pung' };
  assert.equal(describeEvent(claim, ctx(0)), 'You claimed the discard for a pung.');
  assert.equal(describeEvent(claim, ctx(1)), 'Ann claimed the discard for a pung.');
  const settled = { type: 'settled', deltas: [30, -10, -10, -10], scores: [0, 0, 0, 0], settlement: {} };
  assert.equal(describeEvent(settled, ctx(1)), 'Settled: Ann +30, you -10, Cy -10, Di -10.');
});

test('only the drawer learns the tile drawn; a replay of a finished game tells every draw and pass', () => {
  const drew = { type: 'drew', player: 0, tile: '5B', loose: false };
  assert.equal(describeEvent(drew, ctx(0)), 'You drew 5 Bamboo.');
  assert.equal(describeEvent({ ...drew, tile: null }, ctx(1)), null);
  assert.equal(describeEvent(drew, { ...ctx(null), everything: true }), 'Ann drew 5 Bamboo.');
  const passed = { type: 'passed', player: 0, discard: 3, timeout: true };
  assert.equal(describeEvent(passed, ctx(0)), null, 'a pass is not worth a line at the table');
  assert.equal(describeEvent(passed, { ...ctx(null), everything: true }), 'Ann passed (time ran out).');
});

test('lists, counts and claims in words', () => {
  assert.equal(listed([]), '');
  assert.equal(listed(['Ann']), 'Ann');
  assert.equal(listed(['Ann', 'Bo']), 'Ann and Bo');
  assert.equal(listed(['Ann', 'Bo', 'you']), 'Ann, Bo and you');
  assert.equal(count(1, 'tile'), '1 tile');
  assert.equal(count(0, 'tile'), '0 tiles');
  assert.equal(claimPurpose({ chow: 'Lower' }), 'for a chow');
  assert.equal(claimPurpose('mah_jong'), 'to go Mah-Jong');
});

test('the deal is left out of the log: the first 13 draws of each player in a hand', () => {
  const draws = new Map();
  const drew = (player) => dealtTile(draws, { type: 'drew', player, tile: null, loose: false });
  for (let i = 0; i < 13; i++) for (const p of [0, 1, 2, 3]) assert.equal(drew(p), true);
  assert.equal(drew(0), false, "East's 14th tile is shown");
  assert.equal(drew(2), false, 'a replacement is shown');
  assert.equal(dealtTile(draws, { type: 'discarded', player: 0, tile: '1B' }), false);
  dealtTile(draws, { type: 'hand_started', hand: 2 });
  assert.equal(drew(0), true, 'a new hand deals again');
});
