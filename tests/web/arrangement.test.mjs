// crates/server/src/web/js/arrangement.js: the order our concealed tiles are shown in.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { arrange, moveTile } from '../../crates/server/src/web/js/arrangement.js';

test('sorted: the tiles in xmj order', () => {
  assert.deepEqual(arrange([], ['NW', '5D', '1B', 'RD', '3C']), ['1B', '3C', '5D', 'NW', 'RD']);
  assert.deepEqual(arrange(['RD', '1B'], ['RD', '1B'], { sorted: true }), ['1B', 'RD'], 'the previous order does not count');
});

test('sorted: the tile just drawn stays apart at the right', () => {
  assert.deepEqual(arrange([], ['5D', '1B', 'EW', '3C'], { drawn: '1B' }), ['3C', '5D', 'EW', '1B']);
  // One copy of a tile held twice goes to the right.
  assert.deepEqual(arrange([], ['2B', '9C', '2B', '1B'], { drawn: '2B' }), ['1B', '2B', '9C', '2B']);
});

test('sorted: a drawn tile no longer held is ignored', () => {
  assert.deepEqual(arrange([], ['5D', '1B'], { drawn: 'WD' }), ['1B', '5D']);
  assert.deepEqual(arrange([], ['5D', '1B'], { drawn: null }), ['1B', '5D']);
});

test('unsorted: the player order kept, new tiles after it in xmj order', () => {
  assert.deepEqual(arrange(['EW', '3C', '1B'], ['1B', '3C', 'EW', '9D', '2B'], { sorted: false }),
    ['EW', '3C', '1B', '2B', '9D']);
});

test('unsorted: tiles played are dropped, duplicates counted one by one', () => {
  assert.deepEqual(arrange(['2B', '5C', '2B', 'RD'], ['5C', '2B', '7D', '1D'], { sorted: false }),
    ['2B', '5C', '1D', '7D']);
  assert.deepEqual(arrange(['2B'], ['2B', '2B'], { sorted: false }), ['2B', '2B']);
  assert.deepEqual(arrange([], ['NW', '1B'], { sorted: false }), ['1B', 'NW'], 'nothing to keep: sorted');
  assert.deepEqual(arrange(['1B'], [], { sorted: false }), []);
});

test('arrange leaves its arguments alone', () => {
  const previous = ['EW', '3C'];
  const concealed = ['3C', 'EW', '1B'];
  arrange(previous, concealed, { sorted: false });
  arrange(previous, concealed, { drawn: '1B' });
  assert.deepEqual(previous, ['EW', '3C']);
  assert.deepEqual(concealed, ['3C', 'EW', '1B']);
});

test('moveTile moves one tile, in a new array', () => {
  const tiles = ['1B', '2B', '3B', '4B'];
  assert.deepEqual(moveTile(tiles, 0, 2), ['2B', '3B', '1B', '4B']);
  assert.deepEqual(moveTile(tiles, 3, 0), ['4B', '1B', '2B', '3B']);
  assert.deepEqual(moveTile(tiles, 1, 1), tiles);
  assert.deepEqual(tiles, ['1B', '2B', '3B', '4B'], 'the argument unchanged');
  assert.notEqual(moveTile(tiles, 0, 1), tiles);
});

test('moveTile out of range changes nothing', () => {
  const tiles = ['1B', '2B', '3B'];
  for (const [from, to] of [[-1, 0], [0, 3], [3, 0], [0, -1]]) {
    const moved = moveTile(tiles, from, to);
    assert.deepEqual(moved, tiles, `${from} -> ${to}`);
    assert.notEqual(moved, tiles);
  }
});
