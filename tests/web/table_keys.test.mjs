// The table's keyboard (crates/server/src/web/js/table_keys.js): which key
// does what, and which button it presses. tests/browser/play.rs plays a whole
// game with these keys; this file pins the bindings one by one.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { keyCommand, buttonFor } from '../../crates/server/src/web/js/table_keys.js';

/** The screen at our turn: 13 tiles, the 5th selected, no dialog open. */
const AT = { typing: false, scoresOpen: false, dialogOpen: false, tiles: 13, selected: 4, seated: true, onButton: false };
const key = (k, more = {}, at = {}) => keyCommand({ key: k, ...more }, { ...AT, ...at });

test('the arrows move the selection, stopping at the ends; with Shift they move the tile', () => {
  assert.deepEqual(key('ArrowLeft'), { do: 'select', to: 3, move: false });
  assert.deepEqual(key('ArrowRight'), { do: 'select', to: 5, move: false });
  assert.deepEqual(key('ArrowLeft', { shiftKey: true }), { do: 'select', to: 3, move: true });
  assert.deepEqual(key('ArrowLeft', {}, { selected: 0 }), { do: 'select', to: 0, move: false });
  assert.deepEqual(key('ArrowRight', {}, { selected: 12 }), { do: 'select', to: 12, move: false });
  // Nothing selected: → starts at the left end, ← at the right; Shift moves nothing.
  assert.deepEqual(key('ArrowRight', { shiftKey: true }, { selected: null }), { do: 'select', to: 0, move: false });
  assert.deepEqual(key('ArrowLeft', {}, { selected: null }), { do: 'select', to: 12, move: false });
  // A spectator, or an empty row: the arrows are not ours.
  assert.equal(key('ArrowLeft', {}, { seated: false }), null);
  assert.equal(key('ArrowLeft', {}, { tiles: 0 }), null);
});

test('Enter and Space press the default move, unless a focused button takes its own key', () => {
  assert.deepEqual(key('Enter'), { do: 'default' });
  assert.deepEqual(key(' '), { do: 'default' });
  assert.equal(key('Enter', {}, { onButton: true }), null);
  assert.equal(key(' ', {}, { onButton: true }), null);
});

test('a letter presses its button, in either case', () => {
  assert.deepEqual(key('n'), { do: 'letter', letter: 'n' });
  assert.deepEqual(key('D'), { do: 'letter', letter: 'd' });
  assert.equal(key('Escape'), null);
  assert.equal(key('F5'), null);
});

test('keys typed into a field, or with Ctrl, Alt or Meta, are left alone', () => {
  assert.equal(key('n', {}, { typing: true }), null);
  assert.equal(key('Enter', {}, { typing: true }), null);
  assert.equal(key('ArrowLeft', {}, { typing: true }), null);
  for (const mod of ['ctrlKey', 'altKey', 'metaKey']) {
    assert.equal(key('r', { [mod]: true }), null, mod);
    assert.equal(key('ArrowLeft', { [mod]: true }), null, mod);
  }
});

test('over the scoring window only R (ready) counts; over any other dialog, nothing', () => {
  assert.deepEqual(key('r', {}, { scoresOpen: true }), { do: 'score-ready' });
  assert.deepEqual(key('R', {}, { scoresOpen: true }), { do: 'score-ready' });
  assert.equal(key('Enter', {}, { scoresOpen: true }), null);
  assert.equal(key('ArrowLeft', {}, { scoresOpen: true }), null);
  assert.equal(key('r', {}, { dialogOpen: true }), null);
  assert.equal(key('Enter', {}, { dialogOpen: true }), null);
});

test('the default is the button marked default, else the first; a letter the button that underlines it', () => {
  const b = (key, isDefault = false) => ({ dataset: { key, ...(isDefault ? { default: '1' } : {}) } });
  const noClaim = b('n', true);
  const chow = b('c');
  const pung = b('p');
  const plain = { dataset: {} }; // a button without an accelerator
  assert.equal(buttonFor({ do: 'default' }, [chow, noClaim, pung]), noClaim);
  assert.equal(buttonFor({ do: 'default' }, [plain, chow]), plain);
  assert.equal(buttonFor({ do: 'default' }, []), undefined);
  assert.equal(buttonFor({ do: 'letter', letter: 'p' }, [noClaim, chow, pung]), pung);
  assert.equal(buttonFor({ do: 'letter', letter: 'x' }, [noClaim, chow, pung]), undefined);
  // A keyButton without a key has data-key="": no letter presses it.
  assert.equal(buttonFor({ do: 'letter', letter: '' }, [b('')]), undefined);
  // Two kongs offered: the first is K's.
  const kongs = [b('k'), b('k')];
  assert.equal(buttonFor({ do: 'letter', letter: 'k' }, kongs), kongs[0]);
});
