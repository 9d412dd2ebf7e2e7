// The table screen's words (crates/server/src/web/js/narration.js): who is
// "You", which events get a log line, a spoken line and a shout, the log's
// length, the lines restored after a refresh, and what a closed socket says.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  LOG_LINES, REPLAY_SHOUTS, whoIs, eventSentence, logLine, announced, shoutFor, appendLog, historyLines, closedText, logKey,
} from '../../crates/server/src/web/js/narration.js';
import { tableState, NAMES } from './table_fixtures.mjs';

test('the viewer is "You", the others by name; a spectator sees names only', () => {
  const mine = tableState({ seat: 2 });
  assert.equal(whoIs(mine, 2), 'You');
  assert.equal(whoIs(mine, 0), 'Ann');
  const watching = tableState({ seat: null });
  assert.deepEqual([0, 1, 2, 3].map((p) => whoIs(watching, p)), NAMES);
  assert.equal(whoIs(tableState({ table: { seats: [{ seat: 0, name: null }] } }), 1), 'Seat 2', 'a free seat by number');
});

test('sentences are told in the viewer\'s person; a replay tells what a player would not see', () => {
  const drew = { type: 'drew', player: 1, tile: '5B', loose: false };
  assert.equal(eventSentence(tableState({ seat: 1 }), drew), 'You drew 5 Bamboo.');
  assert.equal(eventSentence(tableState({ seat: 0 }), { ...drew, tile: null }), null, 'another player\'s draw is no line');
  assert.equal(eventSentence(tableState({ seat: null }), drew, { everything: true }), 'Bo drew 5 Bamboo.');
  const passed = { type: 'passed', player: 3, discard: 2, timeout: true };
  assert.equal(eventSentence(tableState({ seat: null }), passed), null);
  assert.equal(eventSentence(tableState({ seat: null }), passed, { everything: true }), 'Di passed (time ran out).');
});

test('the log leaves out the deal (13 draws each) but keeps every later draw', () => {
  const state = tableState({ seat: 0 });
  const draws = new Map();
  const sentence = (e) => eventSentence(state, e);
  assert.equal(logLine(draws, { type: 'hand_started', hand: 1, round: 'East', east: 0 }, sentence), 'Hand 1, East round: You are East.');
  const mine = { type: 'drew', player: 0, tile: '1C', loose: false };
  for (let i = 0; i < 13; i++) assert.equal(logLine(draws, mine, sentence), null, `draw ${i + 1} is the deal's`);
  assert.equal(logLine(draws, mine, sentence), 'You drew 1 Characters.');
  // A new hand deals again.
  logLine(draws, { type: 'hand_started', hand: 2, round: 'East', east: 1 }, sentence);
  assert.equal(logLine(draws, mine, sentence), null);
});

test('draws, the wait for ready and the end of declaring are logged but not read out', () => {
  for (const type of ['drew', 'waiting_for_ready', 'finished_declaring']) assert.equal(announced({ type }), false, type);
  for (const type of ['discarded', 'claimed', 'chat', 'hand_started', 'mah_jong']) assert.equal(announced({ type }), true, type);
});

test('claims, sets made and Mah-Jong are shouted; nothing else', () => {
  const name = (p) => NAMES[p];
  assert.equal(shoutFor({ type: 'claimed', player: 1, claim: 'pung' }, name), 'Bo: Pung!');
  assert.equal(shoutFor({ type: 'claimed', player: 1, claim: { chow: null } }, name), 'Bo: Chow!');
  assert.equal(shoutFor({ type: 'claimed', player: 2, claim: 'mah_jong' }, name), 'Cy: Mah Jong!');
  assert.equal(shoutFor({ type: 'mah_jong', player: 3, tile: null }, name), 'Di: Mah Jong!');
  assert.equal(shoutFor({ type: 'robbed_kong', player: 0, tile: 'RD' }, name), 'Ann: Mah Jong!');
  assert.equal(shoutFor({ type: 'chowed', player: 0, tile: '4C', position: 'Middle' }, name), 'Ann: Chow!');
  assert.equal(shoutFor({ type: 'punged', player: 0, tile: 'RD' }, name), 'Ann: Pung!');
  assert.equal(shoutFor({ type: 'konged', player: 0, tile: 'RD' }, name), 'Ann: Kong!');
  for (const type of ['discarded', 'drew', 'chat', 'passed', 'hand_started']) assert.equal(shoutFor({ type, player: 0 }, name), null, type);
  // A replay's step shouts only the claims (the felt shows a set made).
  assert.deepEqual(REPLAY_SHOUTS, ['claimed', 'mah_jong', 'robbed_kong']);
});

test('the log keeps its last LOG_LINES lines, and its key moves on though its length stays put', () => {
  const log = [];
  for (let i = 0; i < LOG_LINES + 5; i++) appendLog(log, `line ${i}`);
  assert.equal(log.length, LOG_LINES);
  assert.equal(log[0], 'line 5');
  assert.equal(log[log.length - 1], `line ${LOG_LINES + 4}`);
  const chat = [{ name: 'Ann', text: 'hi', at_us: 7 }];
  assert.notEqual(logKey(401, chat), logKey(400, chat));
  assert.notEqual(logKey(400, [...chat, { name: 'Bo', text: 'hi', at_us: 9 }]), logKey(400, chat));
  assert.equal(logKey(400, chat), logKey(400, [...chat]));
});

test('after a refresh, a hand\'s stored events give the lines and chat up to the snapshot only', () => {
  const state = tableState({ seat: 1 });
  const events = [
    { seq: 1, at_us: 100, event: { type: 'hand_started', hand: 1, round: 'East', east: 0 } },
    { seq: 2, at_us: 200, event: { type: 'chat', seat: 2, name: 'Cy', text: 'good luck' } },
    { seq: 3, at_us: 300, event: { type: 'discarded', player: 0, tile: '9D', discard: 1, calling: false } },
    { seq: 4, at_us: 400, event: { type: 'discarded', player: 1, tile: '1D', discard: 2, calling: false } },
  ];
  const draws = new Map();
  const { lines, chat } = historyLines(events, 3, (e) => logLine(draws, e, (x) => eventSentence(state, x)));
  assert.deepEqual(lines, ['Hand 1, East round: Ann is East.', 'Ann discarded 9 Circles.']);
  assert.deepEqual(chat, [{ seat: 2, name: 'Cy', text: 'good luck', at_us: 200 }]);
});

test('a closed socket says why, by its close code', () => {
  assert.equal(closedText(4001), 'Your session has ended: log in again to play.');
  assert.equal(closedText(4003), 'You left this seat.');
  assert.equal(closedText(1000, 'an admin closed it'), 'The table has closed: an admin closed it.');
  assert.equal(closedText(1000, ''), 'The table has closed.');
  assert.equal(closedText(4000), 'This seat is now being played in another window or tab.');
});
