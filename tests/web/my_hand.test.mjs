// Our hand's selection and discard (crates/server/src/web/js/my_hand.js):
// which tile is selected once the row is drawn, and which discard a click
// sends or why none is.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { selectionIn, discardChoice } from '../../crates/server/src/web/js/my_hand.js';
import { prompt } from './table_fixtures.mjs';

const ROW = ['1B', '2B', '3B', '5C', '5C', 'RD'];

test('the tile just drawn is selected (its last copy), whatever was selected before', () => {
  assert.equal(selectionIn(ROW, { selected: 1, preselect: '5C', prompt: null }), 4);
  assert.equal(selectionIn(ROW, { selected: 1, preselect: '9D', prompt: null }), 1, 'not in the row: the selection stays');
  assert.equal(selectionIn(ROW, { selected: 2, preselect: null, prompt: prompt('discard', []) }), 2);
});

test('our turn to discard with nothing selected offers the rightmost tile that may go', () => {
  const p = prompt('discard', [{ action: 'discard', tile: '2B', calling: false }, { action: 'discard', tile: '5C', calling: false }]);
  assert.equal(selectionIn(ROW, { selected: null, preselect: null, prompt: p }), 4);
  const first = prompt('discard', [{ action: 'discard', tile: '1B', calling: false }]);
  assert.equal(selectionIn(ROW, { selected: null, preselect: null, prompt: first }), 0, 'the leftmost when only it may go');
  assert.equal(selectionIn(ROW, { selected: null, preselect: null, prompt: prompt('discard', []) }), null);
  assert.equal(selectionIn(ROW, { selected: null, preselect: null, prompt: prompt('answer_discard', p.actions) }), null, 'not our discard');
});

test('a selection past the end of a shorter row falls back to its last tile, or to none', () => {
  assert.equal(selectionIn(ROW.slice(0, 3), { selected: 5, preselect: null, prompt: null }), 2);
  assert.equal(selectionIn([], { selected: 0, preselect: null, prompt: null }), null);
});

test('a discard is sent only as the prompt lists it, calling or not', () => {
  const plain = { action: 'discard', tile: '9D', calling: false };
  const call = { action: 'discard', tile: '9D', calling: true };
  const p = prompt('discard', [plain, call, { action: 'discard', tile: '1B', calling: false }]);
  assert.deepEqual(discardChoice(p, '9D', false), { action: plain });
  assert.deepEqual(discardChoice(p, '9D', true), { action: call });
  assert.deepEqual(discardChoice(p, '1B', true), { refusal: 'You may not discard 1 Bamboo now.' });
  assert.deepEqual(discardChoice(p, null, false), { refusal: 'Select a tile to discard.' });
  // Not our turn to discard (a stray double click): nothing is said.
  assert.deepEqual(discardChoice(prompt('answer_discard', []), '9D', false), { refusal: null });
  assert.deepEqual(discardChoice(null, '9D', false), { refusal: null });
});
