// The setup card (crates/server/src/web/js/table_setup.js): who may sit,
// add or remove a robot, start, leave and set the options, and when the card
// is redrawn; where an invitation leads.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { setupOffered, invitationOutcome } from '../../crates/server/src/web/js/table_setup.js';
import { tableState } from './table_fixtures.mjs';

/** An open table: Ann (seat 0, the manager) and a robot at seat 2; seats 1 and 3 free. */
function open({ seat = 0, manager = 0, seats } = {}) {
  return tableState({
    seat,
    table: {
      state: 'open', manager,
      seats: seats ?? [
        { seat: 0, name: 'Ann', connected: true },
        { seat: 1, name: null },
        { seat: 2, name: 'Robot 2', robot: {}, connected: true },
        { seat: 3, name: null },
      ],
    },
    hand: null,
  });
}

test('a newcomer at an open table with a free seat is asked to join; invited, it is told so', () => {
  assert.deepEqual(setupOffered(open({ seat: null }), undefined).join, { heading: 'Join this game' });
  assert.deepEqual(setupOffered(open({ seat: null }), true).join, { heading: 'You are invited to play' });
  assert.equal(setupOffered(open({ seat: 0 }), undefined).join, null, 'seated already');
  const full = open({ seat: null, seats: [0, 1, 2, 3].map((s) => ({ seat: s, name: `P${s}` })) });
  assert.equal(setupOffered(full, undefined).join, null, 'no free seat');
});

test('the manager adds and removes robots, starts once four sit, and may leave', () => {
  const offer = setupOffered(open({ seat: 0 }), undefined);
  assert.deepEqual(offer.seats.map((s) => [s.seat, s.name, s.robot, s.sit, s.addRobot, s.removeRobot]), [
    [0, 'Ann', false, false, false, false],
    [1, null, false, false, true, false],
    [2, 'Robot 2', true, false, false, true],
    [3, null, false, false, true, false],
  ]);
  assert.deepEqual(offer.start, { full: false });
  assert.equal(offer.leave, true);
  assert.equal(offer.options, true, 'the manager sets the options before the game');
  const full = setupOffered(open({ seats: [0, 1, 2, 3].map((s) => ({ seat: s, name: `P${s}` })) }), undefined);
  assert.deepEqual(full.start, { full: true });
});

test('another player neither starts nor removes robots, and adds one only while only robots sit', () => {
  const bo = setupOffered(open({ seat: 1, seats: [
    { seat: 0, name: 'Ann' }, { seat: 1, name: 'Bo' }, { seat: 2, name: 'Robot 2', robot: {} }, { seat: 3, name: null },
  ] }), undefined);
  assert.equal(bo.start, null);
  assert.equal(bo.options, false);
  assert.deepEqual(bo.seats.map((s) => [s.addRobot, s.removeRobot]), [[false, false], [false, false], [false, false], [false, false]]);
  // With no manager, a seated player manages.
  const nobody = setupOffered(open({ seat: 1, manager: null }), undefined);
  assert.deepEqual(nobody.start, { full: false });
  assert.equal(nobody.seats[2].removeRobot, true);
});

test('a spectator may sit at a free seat, and add robots to a table of robots only', () => {
  const robots = open({ seat: null, manager: null, seats: [
    { seat: 0, name: 'Robot 1', robot: {} }, { seat: 1, name: null }, { seat: 2, name: null }, { seat: 3, name: null },
  ] });
  const offer = setupOffered(robots, undefined);
  assert.deepEqual(offer.seats.map((s) => [s.sit, s.addRobot, s.removeRobot]), [[false, false, false], [true, true, false], [true, true, false], [true, true, false]]);
  assert.equal(offer.leave, false);
  assert.equal(offer.start, null);
  assert.equal(setupOffered(open({ seat: null }), undefined).seats[1].addRobot, false, 'a person sits: only the manager adds robots');
});

test('during the game the card holds only the manager\'s options, and only between hands', () => {
  const playing = (table) => setupOffered(tableState({ seat: 0, table: { manager: 0, ...table } }), undefined);
  const mid = playing({});
  assert.deepEqual([mid.join, mid.seats, mid.start, mid.leave, mid.options, mid.over], [null, null, null, false, false, false]);
  assert.equal(playing({ waiting_for_ready: [1] }).options, true);
  assert.equal(playing({ waiting_for_ready: [1], paused: true }).options, false, 'a pause waits for ready too, but is no time for options');
  assert.equal(setupOffered(tableState({ seat: 1, table: { manager: 0, waiting_for_ready: [1] } }), undefined).options, false);
  const over = setupOffered(tableState({ seat: 0, table: { state: 'over' } }), undefined);
  assert.equal(over.over, true);
  assert.equal(over.options, false);
});

test('the card is redrawn when what it shows changes, not for every event', () => {
  const state = tableState({ seat: 0, table: { waiting_for_ready: [1, 2] } });
  const key = setupOffered(state, undefined).key;
  state.game.hand.discards.push([1, '5B']);
  state.table.scores = [1010, 990, 1000, 1000];
  assert.equal(setupOffered(state, undefined).key, key, 'a discard or a score is none of the card\'s business');
  state.options = { NumRounds: 2 };
  assert.notEqual(setupOffered(state, undefined).key, key, 'an option changed');
  assert.equal(setupOffered(tableState({ seat: 0, table: { waiting_for_ready: [1] } }), undefined).key, key,
    'one fewer to wait for changes nothing on the card');
  assert.notEqual(setupOffered(tableState({ seat: 0 }), undefined).key, key, 'the hand under way: the options go');
  assert.notEqual(setupOffered(open({ seat: null }), true).key, setupOffered(open({ seat: null }), undefined).key);
});

test('an invitation seats a newcomer at a free seat, lets it watch a full or started table, and leaves a player be', () => {
  assert.equal(invitationOutcome(open({ seat: null })), 'sit');
  assert.equal(invitationOutcome(open({ seat: 0 })), 'seated');
  assert.equal(invitationOutcome(open({ seat: null, seats: [0, 1, 2, 3].map((s) => ({ seat: s, name: `P${s}` })) })), 'watch');
  assert.equal(invitationOutcome(tableState({ seat: null })), 'watch');
});
