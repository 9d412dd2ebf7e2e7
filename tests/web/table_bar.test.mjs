// The bar above the table (crates/server/src/web/js/table_bar.js): its words
// (state, hand, wall, connection) and which controls it offers when; the
// messages its pause dialog and settings send.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { barShown, pauseRequest, claimPromptsMessage } from '../../crates/server/src/web/js/table_bar.js';
import { tableState } from './table_fixtures.mjs';

const shown = (state, more = {}) => barShown({ state, status: 'connected', closedText: undefined, replay: false, replayHand: null, ...more });

test('the bar says the table, its state, the hand and the wall', () => {
  const bar = shown(tableState({ game: { round: 'South', hands_started: 5 }, hand: { number: 5, live_tiles_left: 1 } }));
  assert.equal(bar.name, 'Evening game');
  assert.deepEqual(bar.badge, ['playing', 'playing']);
  assert.equal(bar.round, 'South round · hand 5');
  assert.equal(bar.wall, '1 tile in the wall');
  assert.equal(shown(tableState({ hand: { live_tiles_left: 40 } })).wall, '40 tiles in the wall');
  const before = shown(tableState({ table: { state: 'open' }, hand: null }));
  assert.deepEqual([before.badge, before.round, before.wall], [['open', 'open'], null, null]);
});

test('the connection in words; a spectator is watching; a replay has neither, and its own badge', () => {
  assert.equal(shown(tableState()).conn, 'connected');
  assert.equal(shown(tableState(), { status: 'reconnecting' }).conn, 'reconnecting…');
  assert.equal(shown(tableState(), { status: 'closed', closedText: 'You left this seat.' }).conn, 'You left this seat.');
  assert.equal(shown(tableState({ seat: null })).watching, true);
  assert.equal(shown(tableState({ seat: 0 })).watching, false);
  const replay = shown(tableState({ seat: null, game: { hands_started: 0 }, hand: null }), { replay: true, replayHand: 3, status: 'replay' });
  assert.deepEqual([replay.badge, replay.conn, replay.watching, replay.invite], [['over', 'replay'], null, false, false]);
  assert.equal(replay.round, 'East round · hand 3', 'a replay before its deal says its hand');
  assert.equal(shown(tableState({ table: { paused: true } })).paused, true);
});

test('Pause only for a player during a hand in play; Scores once a hand has any', () => {
  assert.ok(shown(tableState({ seat: 0 })).pause);
  assert.ok(!shown(tableState({ seat: null })).pause, 'a spectator');
  assert.ok(!shown(tableState({ seat: 0, hand: { phase: 'finished' } })).pause, 'the hand is over');
  assert.ok(!shown(tableState({ seat: 0, table: { waiting_for_ready: [2] } })).pause, 'waiting for ready');
  assert.ok(!shown(tableState({ seat: 0, hand: null })).pause, 'between hands');
  assert.equal(shown(tableState()).scores, false);
  assert.equal(shown(tableState({ hand: { phase: 'finished', outcome: 'wash_out' } })).scores, true, 'a washed-out hand too');
  const scored = tableState();
  scored.game.hand.seats[1].score = { score: 12 };
  assert.equal(shown(scored).scores, true);
});

test('Sort for a player, Invite until the game is over, Play here once another tab took the seat', () => {
  assert.equal(shown(tableState({ seat: 0 })).sort, true);
  assert.equal(shown(tableState({ seat: null })).sort, false);
  assert.equal(shown(tableState()).invite, true);
  assert.equal(shown(tableState({ table: { state: 'over' } })).invite, false);
  assert.equal(shown(tableState({ seat: 0 }), { status: 'closed' }).playHere, true);
  assert.equal(shown(tableState({ seat: null }), { status: 'closed' }).playHere, false);
  assert.equal(shown(tableState({ seat: 0 })).playHere, false);
});

test('the pause dialog sends its reason trimmed and cut to 500 characters', () => {
  assert.deepEqual(pauseRequest('  phone call \n'), { type: 'request_pause', reason: 'phone call' });
  assert.equal(pauseRequest(`${'x'.repeat(600)}`).reason.length, 500);
  assert.deepEqual(pauseRequest(''), { type: 'request_pause', reason: '' });
});

test('the every-discard setting is told to the table as set_claim_prompts', () => {
  assert.deepEqual(claimPromptsMessage(true), { type: 'set_claim_prompts', every_discard: true });
  assert.deepEqual(claimPromptsMessage(false), { type: 'set_claim_prompts', every_discard: false });
});
