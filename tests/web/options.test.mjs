// crates/server/src/web/js/options.js: score options in their parts and in
// words, presets' names in words.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { scoreParts, scoreWords, presetTitle, COMMON_OPTIONS } from '../../crates/server/src/web/js/options.js';

test('a score option packs limits, doubles and points', () => {
  assert.deepEqual(scoreParts(10000), { limits: 0, doubles: 1, points: 0 });
  assert.deepEqual(scoreParts(20), { limits: 0, doubles: 0, points: 20 });
  assert.deepEqual(scoreParts(1020010), { limits: 1, doubles: 2, points: 10 });
  assert.equal(scoreWords(10000), '1 double');
  assert.equal(scoreWords(20), '20 points');
  assert.equal(scoreWords(0), '0 points');
  assert.equal(scoreWords(1), '1 point');
  assert.equal(scoreWords(1020010), 'a limit + 2 doubles + 10 points');
});

test('presets are named in words', () => {
  assert.equal(presetTitle('japanese-rounding'), 'Japanese rounding');
  assert.equal(presetTitle('chinese-classical'), 'Chinese classical');
  assert.equal(presetTitle('House_rules'), 'House rules');
});

test('the common options come first, each once', () => {
  assert.equal(new Set(COMMON_OPTIONS).size, COMMON_OPTIONS.length);
  assert.equal(COMMON_OPTIONS[0], 'NumRounds');
});
