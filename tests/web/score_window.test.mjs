// The scoring window (crates/server/src/web/js/score_window.js): when it
// opens by itself, when it is redrawn, and its title.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { scoresDue, scoresKey, scoresTitle } from '../../crates/server/src/web/js/score_window.js';
import { tableState, prompt } from './table_fixtures.mjs';

test('it opens by itself once per finished hand, never in a replay', () => {
  const finished = tableState({ hand: { number: 3, phase: 'finished' } });
  assert.deepEqual(scoresDue(finished, null, false), { key: '3', fresh: true });
  assert.deepEqual(scoresDue(finished, '2', false), { key: '3', fresh: true });
  assert.deepEqual(scoresDue(finished, '3', false), { key: '3', fresh: false }, 'already opened: kept current only');
  assert.equal(scoresDue(finished, null, true), null);
  assert.equal(scoresDue(tableState({ hand: { phase: 'discarding' } }), null, false), null);
  assert.equal(scoresDue(tableState({ hand: null }), null, false), null);
});

test('it is redrawn when a score, the outcome, our readiness or the game\'s end changes', () => {
  const state = tableState({ hand: { number: 2, phase: 'finished' } });
  const key = scoresKey(state, prompt(null));
  state.game.hand.discards.push([0, '1B']);
  assert.equal(scoresKey(state, prompt(null)), key, 'nothing shown changed');
  assert.notEqual(scoresKey(state, prompt(null, [], { ready: true })), key);
  state.game.hand.seats[0].score = { score: 24 };
  assert.notEqual(scoresKey(state, prompt(null)), key);
  const over = structuredClone(state);
  over.game.game_over = true;
  assert.notEqual(scoresKey(over, prompt(null)), scoresKey(state, prompt(null)));
});

test('its title: the hand scored, or the game over', () => {
  assert.equal(scoresTitle(tableState({ hand: { number: 4 } })), 'Scores of hand 4');
  assert.equal(scoresTitle(tableState({ game: { game_over: true } })), 'Game over');
  assert.equal(scoresTitle(tableState({ hand: null })), 'Scores of hand ');
});
