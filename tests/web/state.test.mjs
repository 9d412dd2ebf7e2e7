// The client's state logic (crates/server/src/web/js/state.js) on small hand-made streams.
// Whole recorded games are checked against the server's snapshots by
// tests/client_state.rs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromSnapshot, applyEvent, setTiles, chowLow, claimWord, windOf } from '../../crates/server/src/web/js/state.js';

function table(seq = 10) {
  return {
    id: 't', name: 'T', state: 'playing', manager: 0, spectators: 0, preset: 'chinese-classical',
    seats: [0, 1, 2, 3].map((s) => ({ seat: s, name: `P${s}`, connected: true, ready: true })),
    scores: [0, 0, 0, 0], hands: 0, pause_deciseconds: 0, waiting_for_ready: [0], paused: false, seq,
  };
}

function start(seat) {
  return fromSnapshot({ type: 'snapshot', seat, table: table(), game: { viewer: seat, options: {}, scores: [0, 0, 0, 0], round: 'East', hands_started: 0, game_over: false, hand: null } });
}

let seq = 10;
const ev = (event) => ({ type: 'event', seq: ++seq, at_us: 0, event });

test('a deal gives the viewer its tiles and the others a count', () => {
  const s = start(1);
  applyEvent(s, ev({ type: 'hand_started', hand: 1, east: 0, round: 'East', new_round: false, extra_hands: 0, dice: [1, 2] }));
  applyEvent(s, ev({ type: 'drew', player: 1, tile: '5B', loose: false, live_tiles_left: 100 }));
  applyEvent(s, ev({ type: 'drew', player: 1, tile: '6B', loose: false, live_tiles_left: 99 }));
  applyEvent(s, ev({ type: 'drew', player: 2, tile: null, loose: false, live_tiles_left: 98 }));
  const me = s.game.hand.seats.find((x) => x.player === 1);
  const other = s.game.hand.seats.find((x) => x.player === 2);
  assert.deepEqual(me.concealed, ['5B', '6B']);
  assert.equal(other.concealed, null);
  assert.equal(other.concealed_count, 1);
  assert.equal(s.game.hand.live_tiles_left, 98);
  assert.equal(me.wind, 'South');
  assert.equal(s.table.waiting_for_ready.length, 0);
});

test('a chow takes the discard off the table and two tiles from the hand', () => {
  const s = start(1);
  applyEvent(s, ev({ type: 'hand_started', hand: 1, east: 0, round: 'East', new_round: false, extra_hands: 0, dice: [1, 2] }));
  for (const t of ['4C', '6C', '9D']) applyEvent(s, ev({ type: 'drew', player: 1, tile: t, loose: false, live_tiles_left: 90 }));
  applyEvent(s, ev({ type: 'play_started', east: 0 }));
  applyEvent(s, ev({ type: 'discarded', player: 0, tile: '5C', discard: 1, calling: false }));
  assert.equal(s.game.hand.my_answer, 'waiting');
  assert.deepEqual(s.game.hand.claimable, { tile: '5C', discard: 1, from: 0, kong: null });
  applyEvent(s, ev({ type: 'claimed', player: 1, discard: 1, claim: { chow: null } }));
  assert.deepEqual(s.game.hand.my_answer, { claim: { chow: null } });
  applyEvent(s, ev({ type: 'chowed', player: 1, tile: '5C', position: 'Middle' }));
  const me = s.game.hand.seats.find((x) => x.player === 1);
  assert.deepEqual(me.concealed, ['9D']);
  assert.deepEqual(me.sets, [{ kind: 'chow', tile: '4C' }]);
  assert.deepEqual(s.game.hand.discards, []);
  assert.equal(s.game.hand.claimable, null);
  assert.equal(s.game.hand.phase, 'discarding');
  assert.equal(s.game.hand.to_act, 1);
  assert.equal(s.stale, false);
});

test('adding to a pung makes it a kong that may be robbed', () => {
  const s = start(null);
  applyEvent(s, ev({ type: 'hand_started', hand: 1, east: 0, round: 'East', new_round: false, extra_hands: 0, dice: [1, 2] }));
  const p2 = s.game.hand.seats.find((x) => x.player === 2);
  p2.sets.push({ kind: 'pung', tile: 'EW' });
  p2.concealed_count = 11;
  applyEvent(s, ev({ type: 'added_to_pung', player: 2, tile: 'EW', discard: 9 }));
  assert.deepEqual(p2.sets, [{ kind: { kong: { annexed: true } }, tile: 'EW' }]);
  assert.equal(p2.concealed_count, 10);
  assert.equal(s.game.hand.claimable.kong, 'adding_to_pung');
  applyEvent(s, ev({ type: 'robbed_kong', player: 3, tile: 'EW' }));
  assert.deepEqual(p2.sets, [{ kind: 'pung', tile: 'EW' }]);
  assert.equal(s.game.hand.pending_discard, 'EW');
  assert.equal(s.game.hand.phase, 'mah_jonging');
});

test('a kong nobody robs is closed by its loose draw', () => {
  const s = start(1);
  applyEvent(s, ev({ type: 'hand_started', hand: 1, east: 0, round: 'East', new_round: false, extra_hands: 0, dice: [1, 2] }));
  const p0 = s.game.hand.seats.find((x) => x.player === 0);
  p0.sets.push({ kind: 'pung', tile: '7B' });
  p0.concealed_count = 11;
  applyEvent(s, ev({ type: 'added_to_pung', player: 0, tile: '7B', discard: 37 }));
  assert.equal(s.game.hand.my_answer, 'waiting');
  applyEvent(s, ev({ type: 'drew', player: 0, tile: null, loose: true, live_tiles_left: 60 }));
  assert.equal(s.game.hand.claimable, null);
  assert.equal(s.game.hand.my_answer, null);
});

test('events already seen are ignored, and what cannot be followed asks for a snapshot', () => {
  const s = start(0);
  applyEvent(s, { type: 'event', seq: 5, at_us: 0, event: { type: 'chat', seat: 0, name: 'P0', text: 'old' } });
  assert.equal(s.chat.length, 0);
  applyEvent(s, ev({ type: 'swap_started', east: 0 }));
  assert.equal(s.stale, true);
});

test('sets, chows and claims are described as the server writes them', () => {
  assert.deepEqual(setTiles({ kind: 'closed_chow', tile: '7D' }), ['7D', '8D', '9D']);
  assert.deepEqual(setTiles({ kind: { kong: { annexed: false } }, tile: 'RD' }), ['RD', 'RD', 'RD', 'RD']);
  assert.equal(chowLow('5C', 'Upper'), '3C');
  assert.equal(chowLow('5C', 'Lower'), '5C');
  assert.equal(claimWord({ chow: 'Lower' }), 'Chow!');
  assert.equal(claimWord('mah_jong'), 'Mah Jong!');
  assert.equal(windOf(2, 3), 'North');
  assert.equal(windOf(0, 3), 'South');
});
