// crates/server/src/web/js/tiles.js: tile codes, names, Unicode characters and xmj's order.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  ALL_TILES, isBonus, isSuit, isTile, nextInSuit, sortTiles, tileChar, tileName, tileSvg,
} from '../../crates/server/src/web/js/tiles.js';

// xmj's order (seed 004): Bamboos (1-9), Characters (1-9), Circles (1-9),
// Winds (ESWN), Dragons (RWG), Flowers, Seasons; the animals after them.
const XMJ_ORDER = [
  '1B', '2B', '3B', '4B', '5B', '6B', '7B', '8B', '9B',
  '1C', '2C', '3C', '4C', '5C', '6C', '7C', '8C', '9C',
  '1D', '2D', '3D', '4D', '5D', '6D', '7D', '8D', '9D',
  'EW', 'SW', 'WW', 'NW',
  'RD', 'WD', 'GD',
  '1F', '2F', '3F', '4F',
  '1S', '2S', '3S', '4S',
  '1A', '2A', '3A', '4A',
];

/** A fixed shuffle (no randomness in tests). */
function shuffled(tiles) {
  const out = [...tiles];
  let seed = 7;
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

test('sortTiles puts every tile in xmj order', () => {
  assert.deepEqual(sortTiles(shuffled(XMJ_ORDER)), XMJ_ORDER);
  assert.deepEqual(sortTiles([...XMJ_ORDER].reverse()), XMJ_ORDER);
  assert.deepEqual(ALL_TILES, XMJ_ORDER, 'the palette is in the same order');
});

test('sortTiles orders a hand: suits by number, winds E S W N, dragons R W G, then bonus tiles', () => {
  const hand = ['NW', '2S', 'GD', '9C', 'EW', '1F', '3D', 'WW', 'RD', '5B', '1C', 'SW', 'WD', '5B', '4F'];
  assert.deepEqual(sortTiles(hand),
    ['5B', '5B', '1C', '9C', '3D', 'EW', 'SW', 'WW', 'NW', 'RD', 'WD', 'GD', '1F', '4F', '2S']);
});

test('sortTiles keeps duplicates, puts hidden tiles last and leaves its argument alone', () => {
  const tiles = [null, '7D', '7D', null, '2B'];
  const copy = [...tiles];
  assert.deepEqual(sortTiles(tiles), ['2B', '7D', '7D', null, null]);
  assert.deepEqual(tiles, copy);
  assert.notEqual(sortTiles(tiles), tiles);
  assert.deepEqual(sortTiles([]), []);
});

test('tileName gives the names xmj shows', () => {
  const names = {
    '3B': '3 Bamboo', '1C': '1 Characters', '9D': '9 Circles',
    EW: 'East Wind', SW: 'South Wind', WW: 'West Wind', NW: 'North Wind',
    '1F': 'Plum (flower 1)', '2F': 'Orchid (flower 2)', '3F': 'Chrysanthemum (flower 3)', '4F': 'Bamboo (flower 4)',
    '1S': 'Spring (season 1)', '4S': 'Winter (season 4)',
    '1A': 'Cat (animal)', '4A': 'Centipede (animal)',
  };
  for (const [code, name] of Object.entries(names)) assert.equal(tileName(code), name, code);
  assert.equal(tileName(null), 'concealed tile');
  assert.equal(tileName(undefined), 'concealed tile');
});

test('tileName names the dragons (whose codes end in D, as the circles do)', () => {
  assert.equal(tileName('RD'), 'Red Dragon');
  assert.equal(tileName('WD'), 'White Dragon');
  assert.equal(tileName('GD'), 'Green Dragon');
});

test('tileChar gives the Unicode Mahjong Tiles character', () => {
  const chars = {
    EW: 0x1f000, SW: 0x1f001, WW: 0x1f002, NW: 0x1f003,
    RD: 0x1f004, GD: 0x1f005, WD: 0x1f006,
    '1C': 0x1f007, '9C': 0x1f00f, '1B': 0x1f010, '9B': 0x1f018, '1D': 0x1f019, '5D': 0x1f01d, '9D': 0x1f021,
    // Unicode orders the flowers Plum, Orchid, Bamboo, Chrysanthemum; mj's 3F
    // is the chrysanthemum and 4F the bamboo.
    '1F': 0x1f022, '2F': 0x1f023, '3F': 0x1f025, '4F': 0x1f024,
    '1S': 0x1f026, '2S': 0x1f027, '3S': 0x1f028, '4S': 0x1f029,
  };
  for (const [code, point] of Object.entries(chars)) {
    assert.equal(tileChar(code), String.fromCodePoint(point), `${code}: U+${point.toString(16).toUpperCase()}`);
  }
  assert.equal(tileChar(null), '\u{1F02B}', 'a hidden tile is the back');
  for (const animal of ['1A', '2A', '3A', '4A']) assert.equal(tileChar(animal), '', `${animal}: Unicode has no animals`);
});

test('isTile accepts exactly the server tile codes', () => {
  for (const code of XMJ_ORDER) assert.ok(isTile(code), code);
  for (const code of ['0B', '10B', '1E', '1b', 'ew', 'XW', 'ED', 'BD', '5F', '0S', '5A', 'E', '', ' 1B', '1B ']) {
    assert.equal(isTile(code), false, JSON.stringify(code));
  }
  for (const value of [null, undefined, 12, ['1B'], { code: '1B' }]) assert.equal(isTile(value), false, String(value));
});

test('isBonus and isSuit', () => {
  assert.deepEqual(XMJ_ORDER.filter(isSuit), XMJ_ORDER.slice(0, 27));
  assert.deepEqual(XMJ_ORDER.filter(isBonus), XMJ_ORDER.slice(34));
  assert.equal(isBonus(null), false);
  assert.equal(isSuit(null), false);
});

test('nextInSuit steps within a suit only', () => {
  assert.equal(nextInSuit('3B'), '4B');
  assert.equal(nextInSuit('7C', 2), '9C');
  assert.equal(nextInSuit('2D', -1), '1D');
  assert.equal(nextInSuit('9C'), null);
  assert.equal(nextInSuit('1D', -1), null);
  assert.equal(nextInSuit('EW'), null);
  assert.equal(nextInSuit('RD'), null);
});

test('tileSvg draws every tile and the back', () => {
  for (const code of [...XMJ_ORDER, null]) {
    const svg = tileSvg(code);
    assert.match(svg, /^<svg viewBox="0 0 60 80" [^>]*>.*<\/svg>$/s, String(code));
    assert.equal(tileSvg(code), svg, 'the same markup each time');
  }
  assert.notEqual(tileSvg('1B'), tileSvg(null));
  assert.notEqual(tileSvg('1B'), tileSvg('2B'));
});
