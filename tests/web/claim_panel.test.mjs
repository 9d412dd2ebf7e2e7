// The moves on offer (crates/server/src/web/js/claim_panel.js): for a given
// prompt, which buttons the dock offers, with which labels, accelerator keys,
// ids and default (Enter's), and what each click sends. The browser tests
// (tests/browser/) click these by id and data-action; a change here shows
// first in this file.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  movesOffered, claimOffered, claimedTileForChow, chowLabel, describeClosedSet,
} from '../../crates/server/src/web/js/claim_panel.js';
import { tableState, prompt } from './table_fixtures.mjs';

const offer = (p, { state = tableState(), selectedTile = null, replay = false } = {}) => movesOffered({ prompt: p, state, selectedTile, replay });
const buttons = (moves) => moves.filter((m) => !('hint' in m));
const hints = (moves) => moves.filter((m) => 'hint' in m).map((m) => m.hint);
const ids = (moves) => buttons(moves).map((m) => m.attrs?.id ?? null);
const defaults = (moves) => buttons(moves).filter((m) => (m.attrs ?? {}).dataset?.default === '1' || m.chow?.isDefault).map((m) => m.label ?? m.chow.label);

test('a spectator and a replay are told what they see, with nothing to press', () => {
  const watching = offer(prompt('discard', [{ action: 'discard', tile: '1B' }]), { state: tableState({ seat: null }) });
  assert.deepEqual(watching.moves, [{ hint: 'You are watching: every concealed tile stays hidden until it is shown.' }]);
  assert.equal(watching.claim, null);
  const replay = offer(null, { state: tableState({ seat: null }), replay: true });
  assert.match(replay.moves[0].hint, /^A replay of a finished game/);
});

test('Ready says what it leads to: the first deal, the next hand, or resuming', () => {
  const ready = (state) => offer(prompt(null, [], { ready: true }), { state }).moves[0];
  const first = ready(tableState({ hand: null }));
  assert.equal(first.label, 'Ready: deal the first hand');
  assert.equal(first.key, 'r');
  assert.deepEqual(first.does, { ready: true });
  assert.deepEqual(first.attrs, { class: 'primary big', id: 'ready', dataset: { default: '1' } });
  assert.equal(ready(tableState()).label, 'Ready for the next hand');
  assert.equal(ready(tableState({ table: { paused: true } })).label, 'Ready to resume');
});

test('declaring: each flower (the first is Enter\'s), a concealed kong, then finish', () => {
  const bonus = { action: 'declare_bonus', tile: '1F' };
  const kong = { action: 'declare_closed_kong', tile: 'RD' };
  const finish = { action: 'finish_declaring' };
  const { moves } = offer(prompt('declare', [bonus, { action: 'declare_bonus', tile: '2S' }, kong, finish]));
  assert.deepEqual(moves.map((m) => m.label), ['Declare Plum (flower 1)', 'Declare Summer (season 2)', 'Kong of Red Dragon', 'Finish declaring']);
  assert.deepEqual(defaults(moves), ['Declare Plum (flower 1)']);
  assert.deepEqual(moves.map((m) => m.key), [undefined, undefined, undefined, 'f'], 'only Finish has a key');
  assert.deepEqual(moves[0].does, { act: bonus });
  assert.deepEqual(moves[2].attrs.dataset, { action: 'declare_closed_kong' });
  // Nothing to declare: Finish is the default, and says so.
  const nothing = offer(prompt('declare', [finish])).moves;
  assert.equal(nothing[0].label, 'Finish declaring (nothing to declare)');
  assert.deepEqual(nothing[0].attrs, { class: 'primary', id: 'finish-declaring', dataset: { default: '1' } });
});

test('discarding: Discard is enabled only for a tile the prompt lists; calling and Mah-Jong when listed', () => {
  const actions = [
    { action: 'discard', tile: '9D', calling: false },
    { action: 'discard', tile: '9D', calling: true },
    { action: 'discard', tile: '1B', calling: false },
    { action: 'mah_jong' },
    { action: 'add_to_pung', tile: 'RD' },
  ];
  const p = prompt('discard', actions);
  const nine = offer(p, { selectedTile: '9D' }).moves;
  assert.deepEqual(ids(nine), ['mah-jong', 'discard', 'original-call', null]);
  const [mj, discard, call, add] = buttons(nine);
  assert.deepEqual([mj.label, mj.key], ['Mah Jong!', 'm']);
  assert.deepEqual([discard.label, discard.key, discard.attrs.disabled], ['Discard 9 Circles', 'd', false]);
  assert.deepEqual(discard.does, { discard: false });
  assert.deepEqual([call.label, call.key, call.attrs.disabled, call.does], ['Discard and call', 'o', false, { discard: true }]);
  assert.deepEqual([add.label, add.key], ['Add Red Dragon to its pung', 'a']);
  assert.deepEqual(hints(nine), ['Select a tile (←/→), then Discard (or double-click it).']);
  // 1B may be discarded but not with a call; 5C not at all; nothing selected says so.
  const one = buttons(offer(p, { selectedTile: '1B' }).moves);
  assert.deepEqual([one[1].attrs.disabled, one[2].attrs.disabled], [false, true]);
  assert.equal(buttons(offer(p, { selectedTile: '5C' }).moves)[1].attrs.disabled, true);
  assert.equal(buttons(offer(p).moves)[1].label, 'Discard (select a tile)');
  // No call listed: no call button.
  assert.deepEqual(ids(offer(prompt('discard', [actions[2]]), { selectedTile: '1B' }).moves), ['discard']);
});

test('a claim prompt opens the claim panel: No claim first (Enter\'s), then the claims listed', () => {
  const pass = { action: 'pass', discard: 4 };
  const chow = { action: 'claim', discard: 4, claim: { chow: null } };
  const pung = { action: 'claim', discard: 4, claim: 'pung' };
  const mj = { action: 'claim', discard: 4, claim: 'mah_jong' };
  const claimable = { tile: '5C', discard: 4, from: 1, kong: null };
  const state = tableState({ seat: 0, hand: { claimable } });
  const p = prompt('answer_discard', [pass, chow, pung, mj], { claimable, deadline: { at_us: 0, ms_left: 8000 } });
  const { moves, claim } = offer(p, { state });
  assert.deepEqual(moves, [], 'the moves row is empty while the panel asks');
  assert.deepEqual(claim.buttons.map((b) => [b.label, b.key, b.attrs.id]),
    [['No claim', 'n', 'no-claim'], ['Chow', 'c', 'claim-chow'], ['Pung', 'p', 'claim-pung'], ['Mah Jong!', 'm', 'claim-mah-jong']]);
  assert.deepEqual(claim.buttons[0].attrs.dataset, { default: '1' });
  assert.deepEqual(claim.buttons.map((b) => b.does.act), [pass, chow, pung, mj]);
  assert.equal(claim.question, 'Bo discarded 5 Characters. Claim it?');
  assert.deepEqual(claim.deadline, { at_us: 0, ms_left: 8000 });
  assert.equal(claim.claimable, claimable);
});

test('the claim panel: chows by position, a kong, robbing a kong, and nothing to claim', () => {
  const lower = { action: 'claim', discard: 4, claim: { chow: 'Lower' } };
  const upper = { action: 'claim', discard: 4, claim: { chow: 'Upper' } };
  const kong = { action: 'claim', discard: 4, claim: 'kong' };
  const claimable = { tile: '5C', discard: 4, from: 0, kong: null };
  const byPosition = claimOffered(prompt('answer_discard', [lower, upper, kong], { claimable }), tableState({ seat: 0 }));
  assert.deepEqual(byPosition.buttons.map((b) => [b.label, b.key, b.attrs.id ?? null]),
    [['Chow (lowest)', undefined, null], ['Chow (highest)', undefined, null], ['Kong', 'k', 'claim-kong']]);
  assert.equal(byPosition.question, 'You discarded 5 Characters. Claim it?');
  assert.equal(byPosition.deadline, null, 'no timer without a deadline');
  const robbing = { tile: 'RD', discard: 9, from: 2, kong: 'adding_to_pung' };
  const rob = claimOffered(prompt('answer_kong', [{ action: 'pass', discard: 9 }, { action: 'claim', discard: 9, claim: 'mah_jong' }], { claimable: robbing }), tableState());
  assert.deepEqual(rob.buttons.map((b) => b.label), ['No claim', 'Rob the kong: Mah Jong!']);
  assert.equal(rob.question, 'Cy declared a kong of Red Dragon. Claim it?');
  assert.equal(claimOffered(prompt('answer_discard', [], { claimable }), tableState()), null);
  assert.equal(claimOffered(prompt('answer_discard', [{ action: 'pass', discard: 4 }]), tableState()).question, 'Claim?');
});

test('a granted chow: one button per position, its lowest tile and its words', () => {
  const state = tableState({ hand: { claimable: { tile: '5C', discard: 4, from: 3, kong: null } } });
  const positions = ['Lower', 'Middle', 'Upper'].map((position) => ({ action: 'choose_chow_position', position }));
  const { moves } = offer(prompt('choose_chow_position', positions), { state });
  assert.deepEqual(hints(moves), ['Your chow claim was granted: choose which chow 5 Characters makes.']);
  assert.deepEqual(buttons(moves).map((m) => [m.chow.low, m.chow.label, m.chow.isDefault]), [
    ['5C', 'Chow with 5 Characters as the lowest tile', true],
    ['4C', 'Chow with 5 Characters as the middle tile', false],
    ['3C', 'Chow with 5 Characters as the highest tile', false],
  ]);
  assert.equal(buttons(moves)[1].chow.action, positions[1]);
  // Without the tile, the position alone, and no tiles drawn.
  assert.equal(claimedTileForChow(tableState()), null);
  assert.equal(claimedTileForChow(tableState({ hand: { pending_discard: '7B' } })), '7B');
  assert.equal(chowLabel('Middle', null), 'Middle');
  assert.equal(offer(prompt('choose_chow_position', positions)).moves[0].hint, 'Choose your chow:');
});

test('going out on a discard: the uses listed, a chow anywhere offered as its exact chows', () => {
  const state = tableState({ hand: { pending_discard: '5B' } });
  const uses = [
    { action: 'use_discard', as: 'pair' },
    { action: 'use_discard', as: 'pung' },
    { action: 'use_discard', as: { chow: null } },
    { action: 'use_discard', as: { chow: 'Lower' } },
  ];
  const { moves } = offer(prompt('use_discard', uses), { state });
  assert.deepEqual(hints(moves), ['Your hand is complete: choose how the winning 5 Bamboo is used.']);
  const offered = buttons(moves);
  assert.deepEqual(offered.map((m) => m.label ?? m.chow.label), ['As the pair (eyes)', 'As a pung', 'Chow with 5 Bamboo as the lowest tile']);
  assert.deepEqual(offered.map((m) => m.key), ['e', 'p', undefined]);
  assert.deepEqual(offered[0].attrs.dataset, { action: 'use_discard', default: '1' });
  assert.deepEqual(offered[1].attrs.dataset, { action: 'use_discard' });
  // Only "in a chow" listed: it is offered as such.
  const anywhere = buttons(offer(prompt('use_discard', [uses[2]]), { state }).moves);
  assert.deepEqual(anywhere.map((m) => [m.label, m.key]), [['In a chow', 'c']]);
  const special = buttons(offer(prompt('use_discard', [{ action: 'use_discard', as: 'special_set' }]), { state }).moves);
  assert.deepEqual(special.map((m) => [m.label, m.key]), [['Completing a special hand', 's']]);
});

test('the tile swap: how many lots, then a tile to pass once one is selected', () => {
  const lots = [0, 1, 2].map((n) => ({ action: 'choose_swap', lots: n }));
  const chosen = buttons(offer(prompt('choose_swap', lots)).moves);
  assert.deepEqual(chosen.map((m) => [m.label, m.attrs.class]), [['No swap', 'primary'], ['1 lot', ''], ['2 lots', '']]);
  assert.deepEqual(chosen[2].attrs.dataset, { action: 'choose_swap', lots: 2 });
  const state = tableState({ hand: { swap: { lots: 2, lot: 1, direction: 'across' } } });
  const pass = { action: 'pass_tile', tile: '3D' };
  const none = offer(prompt('pass_tile', [pass]), { state }).moves;
  assert.deepEqual(hints(none), ['Tile swap, lot 1 of 2: choose a tile to pass across the table.']);
  assert.deepEqual([buttons(none)[0].label, buttons(none)[0].attrs.disabled, buttons(none)[0].does], ['Pass a tile (select it)', true, { act: undefined }]);
  const some = buttons(offer(prompt('pass_tile', [pass]), { state, selectedTile: '3D' }).moves)[0];
  assert.deepEqual([some.label, some.key, some.attrs.id, some.attrs.disabled, some.does], ['Pass 3 Circles face down', 'p', 'pass-tile', false, { act: pass }]);
});

test('laying out the hand after a Mah-Jong: the sets first (Enter\'s), then show the tiles', () => {
  const state = tableState({ seat: 0, hand: { phase: 'finished', outcome: { won: { winner: 2 } } } });
  const sets = [{ action: 'form_closed_set', set: { pung: 'RD' } }, { action: 'form_closed_set', set: { chow: '3B' } }];
  const show = { action: 'show_tiles' };
  const { moves } = offer(prompt('show_hand', [...sets, show]), { state });
  assert.deepEqual(hints(moves), ['Cy went Mah-Jong. Lay out the sets you hold (they score), then show your tiles.']);
  assert.deepEqual(buttons(moves).map((m) => m.label), ['Pung of Red Dragon', 'Chow 3 Bamboo up', 'Show tiles as they are']);
  assert.deepEqual(defaults(moves), ['Pung of Red Dragon']);
  const last = offer(prompt('show_hand', [show]), { state }).moves;
  assert.deepEqual(buttons(last)[0].attrs, { class: 'primary', id: 'show-tiles', dataset: { default: '1' } });
  assert.equal(buttons(last)[0].label, 'Show tiles');
  const mine = offer(prompt('declare_winning_hand', [sets[0]]), { state: tableState({ seat: 2, hand: { outcome: { won: { winner: 2 } } } }) });
  assert.match(hints(mine.moves)[0], /^You went Mah-Jong: lay out your concealed sets/);
  assert.equal(describeClosedSet('special_set'), 'Special hand');
  assert.equal(describeClosedSet({ kong: 'EW' }), 'Kong of East Wind');
});

test('with nothing to do, the row says whom the table waits for', () => {
  const waiting = offer(prompt(null, []), { state: tableState({ seat: 0, hand: { to_act: 3 } }) });
  assert.deepEqual(waiting.moves, [{ hint: 'Waiting for Di…' }]);
  const claimed = offer(null, { state: tableState({ hand: { my_answer: { claim: 'pung' } } }) });
  assert.deepEqual(claimed.moves, [{ hint: 'You claimed Pung! Waiting for the others…' }]);
  assert.deepEqual(offer(null, { state: tableState({ hand: { phase: 'finished' } }) }).moves, []);
  assert.deepEqual(offer(null, { state: tableState({ table: { state: 'open' }, hand: null }) }).moves, []);
});

test('the table screen and its parts load without a document', async () => {
  for (const name of ['table', 'claim_panel', 'my_hand', 'narration', 'score_window', 'table_api', 'table_bar', 'table_keys', 'table_setup']) {
    const module = await import(`../../crates/server/src/web/js/${name}.js`);
    assert.ok(Object.keys(module).length, name);
  }
});
