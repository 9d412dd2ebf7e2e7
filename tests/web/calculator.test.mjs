// The scoring calculator page's data (crates/server/src/web/js/described_hand.js): hands
// entered tile by tile within the limits of real tiles, and the requests it
// sends to POST /api/v1/score and POST /api/v1/settle. Run with
// `node --test tests/web/`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import * as model from '../../crates/server/src/web/js/described_hand.js';
import { tileName } from '../../crates/server/src/web/js/tiles.js';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

/** The JSON blocks of docs/protocol.md marked with `marker` (e.g. "ScoreRequest input"). */
function documented(marker) {
  const doc = readFileSync(here('../../docs/protocol.md'), 'utf8');
  const blocks = [];
  const re = new RegExp(`<!-- json: ${marker} -->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``, 'g');
  for (const m of doc.matchAll(re)) blocks.push(JSON.parse(m[1]));
  return blocks;
}

const hands = (...hs) => [...hs, ...Array(4 - hs.length).fill(null).map(model.newHand)];
const concealed = (...tiles) => ({ ...model.newHand(), concealed: tiles });

test('tiles are added where asked, and removed again', () => {
  let hand = model.newHand();
  hand = model.withTile(hand, { to: 'concealed' }, '5C');
  hand = model.withTile(hand, { to: 'concealed' }, '2B');
  hand = model.withTile(hand, { to: 'set', kind: 'closed_kong' }, 'RD');
  hand = model.withTile(hand, { to: 'set', kind: 'annexed_kong' }, 'EW');
  hand = model.withTile(hand, { to: 'bonus' }, '3S');
  assert.deepEqual(hand.concealed, ['2B', '5C'], 'concealed tiles are kept in order');
  assert.deepEqual(hand.sets, [{ kind: 'closed_kong', tile: 'RD' }, { kind: { kong: { annexed: true } }, tile: 'EW' }]);
  assert.deepEqual(hand.bonus, ['3S']);
  assert.equal(model.heldCount(hand), 8, 'a kong counts as three tiles');
  assert.deepEqual(model.tilesOf(hand).length, 11);
  hand = model.without(hand, 'sets', 0);
  hand = model.without(hand, 'concealed', 1);
  assert.deepEqual([hand.sets.length, hand.concealed, hand.bonus], [1, ['2B'], ['3S']]);
  assert.equal(model.kindOf({ kong: { annexed: false } }).id, 'kong');
  assert.equal(model.kindOf('closed_pair').play, false);
});

test('what real tiles forbid is refused, with the reason', () => {
  const empty = hands(model.newHand());
  assert.match(model.refusal(empty, 0, { to: 'set', kind: 'chow' }, '8B'), /no chow starts with 8 Bamboo/);
  assert.match(model.refusal(empty, 0, { to: 'set', kind: 'closed_chow' }, 'EW'), /no chow starts with East Wind/);
  assert.equal(model.refusal(empty, 0, { to: 'set', kind: 'chow' }, '7B'), null);
  assert.match(model.refusal(empty, 0, { to: 'set', kind: 'pung' }, '1F'), /set aside as a bonus tile/);
  assert.match(model.refusal(empty, 0, { to: 'concealed' }, '2A'), /set aside as a bonus tile/);
  assert.match(model.refusal(empty, 0, { to: 'bonus' }, '5D'), /not a flower, season or animal/);
  assert.match(model.refusal(empty, 0, { to: 'set', kind: 'nonsense' }, '5D'), /choose the kind of set/);
  // Four of a face over all the hands; one of each bonus tile.
  const four = hands(concealed('5B', '5B', '5B'), concealed('5B'));
  assert.match(model.refusal(four, 2, { to: 'concealed' }, '5B'), /there are only 4 of 5 Bamboo/);
  assert.match(model.refusal(four, 2, { to: 'set', kind: 'chow' }, '3B'), /there are only 4 of 5 Bamboo/);
  assert.equal(model.refusal(four, 2, { to: 'set', kind: 'chow' }, '6B'), null);
  // Dragons are named as dragons (their codes end in D, as circles' do).
  const dragons = hands(concealed('RD', 'RD', 'RD'), concealed('RD'));
  assert.equal(model.refusal(dragons, 2, { to: 'set', kind: 'pung' }, 'RD'), 'there are only 4 of Red Dragon');
  assert.deepEqual(['RD', 'WD', 'GD', '5D', 'EW', '2S'].map(tileName),
    ['Red Dragon', 'White Dragon', 'Green Dragon', '5 Circles', 'East Wind', 'Summer (season 2)']);
  const flower = hands({ ...model.newHand(), bonus: ['1F'] });
  assert.match(model.refusal(flower, 1, { to: 'bonus' }, '1F'), /there is only one Plum/);
  // At most 14 tiles, a kong as three; at most 7 sets.
  const full = hands(concealed('1B', '2B', '3B', '4B', '5B', '6B', '7B', '8B', '9B', '1C', '2C', '3C', '4C', '5C'));
  assert.match(model.refusal(full, 0, { to: 'concealed' }, 'RD'), /at most 14 tiles/);
  assert.equal(model.refusal(full, 0, { to: 'bonus' }, '2F'), null, 'bonus tiles are over and above');
  const eleven = hands(concealed('1B', '2B', '3B', '4B', '5B', '6B', '7B', '8B', '9B', '1C', '2C'));
  assert.equal(model.refusal(eleven, 0, { to: 'set', kind: 'kong' }, 'RD'), null, 'a kong takes three places');
  const sevenSets = hands({ ...model.newHand(), sets: Array(7).fill({ kind: 'closed_pair', tile: '1D' }) });
  assert.match(model.refusal(sevenSets, 0, { to: 'set', kind: 'closed_pair' }, '2D'), /at most 7 sets/);
});

test('a hand says what it lacks', () => {
  assert.equal(model.shortfall(concealed('1B'), false), '12 more tiles needed (1 of 13)');
  assert.equal(model.shortfall(concealed('1B', '1B'), true), '12 more tiles needed (2 of 14)');
  const thirteen = concealed('1B', '2B', '3B', '4B', '5B', '6B', '7B', '8B', '9B', '1C', '2C', '3C', '4C');
  assert.equal(model.shortfall(thirteen, false), null);
  assert.equal(model.shortfall(thirteen, true), '1 more tile needed (13 of 14)');
  assert.equal(model.shortfall({ ...thirteen, concealed: [...thirteen.concealed, '5C'] }, false), '1 tile too many (14 of 13)');
  assert.deepEqual(model.winningTileChoices(concealed('5C', '2B', '5C')), ['2B', '5C']);
});

test('seed 004\'s example is the documented request, whose documented answer is 704', () => {
  const calc = model.seed004Example();
  const sent = model.scoreRequest(calc, calc.winner);
  const [doc] = documented('ScoreRequest input');
  assert.equal(doc.win.tile, '4C', 'the first documented request is seed 004\'s');
  // The same hand: the page writes every field, and keeps concealed tiles in order.
  assert.deepEqual({ ...sent, concealed: [...sent.concealed].sort() },
    { preset: 'chinese-classical', prevailing_wind: 'East', bonus: [], ...doc, concealed: [...doc.concealed].sort() });
  const [answer] = documented('ScoreResponse');
  assert.equal(answer.score.score, 704);
  assert.equal(model.notReady(calc, calc.winner), null);
  // The others' hands are empty: not ready until described or typed.
  assert.equal(model.notReady(calc, 0), '13 more tiles needed (0 of 13)');
});

test('a loser\'s request has no win; the others\' sets of play are in sight', () => {
  const calc = model.newCalculator('shanghai-expat');
  calc.prevailing = 'South';
  calc.winner = 0;
  calc.players[0].hand = {
    sets: [{ kind: 'pung', tile: '9D' }, { kind: 'closed_pair', tile: 'RD' }, { kind: 'closed_kong', tile: 'WD' }],
    concealed: [], bonus: ['1F'],
  };
  calc.players[1].mode = 'score';
  calc.players[1].hand = { sets: [{ kind: 'chow', tile: '1B' }], concealed: [], bonus: ['2S'] };
  calc.players[3].hand = { sets: [{ kind: 'pung', tile: '5C' }], concealed: ['3B', '3B', '3B'], bonus: ['2A'] };
  calc.given = true;
  const sent = model.scoreRequest(calc, 3);
  assert.deepEqual(sent, {
    preset: 'shanghai-expat',
    options: {},
    seat_wind: 'North',
    prevailing_wind: 'South',
    sets: [{ kind: 'pung', tile: '5C' }],
    concealed: ['3B', '3B', '3B'],
    bonus: ['2A'],
    // East's pung and concealed kong and its flower; not its formed pair, nor
    // the hand of a player whose score is typed.
    visible: ['9D', '9D', '9D', 'WD', 'WD', 'WD', 'WD', '1F'],
    arrange: 'given',
  });
  calc.win = { ...calc.win, tile: '9D', from: 'loose', kong_upon_kong: true, east_wins_before: 3 };
  const winner = model.scoreRequest(calc, 0);
  assert.deepEqual(winner.win, { tile: '9D', from: 'loose', kong_upon_kong: true, east_wins_before: 3 });
  assert.deepEqual(winner.visible, ['5C', '5C', '5C', '2A']);
});

test('the settlement request: player numbers are seats, East first', () => {
  const calc = model.seed004Example();
  assert.deepEqual(model.settleRequest(calc, [0, 704, 0, 0]), {
    body: { preset: 'chinese-classical', options: { MahJongScore: 10 }, east: 0, winner: 1, discarder: 2, scores: [0, 704, 0, 0] },
  });
  assert.deepEqual(model.settleRequest(calc, [0, 704, 0]), { error: 'every player needs a score' });
  assert.deepEqual(model.settleRequest({ ...calc, discarder: null }, [0, 704, 0, 0]), { error: 'say who discarded the winning tile' });
  assert.deepEqual(model.settleRequest({ ...calc, discarder: null, win: { ...calc.win, from: 'robbed_kong' } }, [0, 704, 0, 0]),
    { error: 'say whose kong was robbed' });
  assert.deepEqual(model.settleRequest({ ...calc, discarder: 1 }, [0, 704, 0, 0]), { error: 'the winner cannot have discarded the winning tile' });
  assert.deepEqual(model.settleRequest({ ...calc, cannon: 1 }, [0, 704, 0, 0]), { error: 'the winner cannot have let off a cannon' });
  assert.deepEqual(model.settleRequest({ ...calc, winner: null }, [0, 704, 0, 0]), { error: 'say who went Mah-Jong' });
  const drawn = { ...calc, win: { ...calc.win, from: 'wall' }, cannon: 3, extra_hands: 2, double_dice: true };
  assert.deepEqual(model.settleRequest(drawn, [8, 704, 4, 0]).body,
    { preset: 'chinese-classical', options: { MahJongScore: 10 }, east: 0, winner: 1, cannon: 3, extra_hands: 2, double_dice: true, scores: [8, 704, 4, 0] });
  // The documented settlement example's shape is what the page sends.
  const [doc] = documented('SettleRequest input');
  assert.ok('east' in doc && 'winner' in doc && Array.isArray(doc.scores));
});

test('typed scores and options are checked before anything is sent', () => {
  assert.deepEqual(model.typedScore(' 704 '), { score: 704 });
  assert.deepEqual(model.typedScore('0'), { score: 0 });
  assert.equal(model.typedScore('').error, 'a score is a whole number');
  assert.equal(model.typedScore('-4').error, 'a score is a whole number');
  assert.equal(model.typedScore('1.5').error, 'a score is a whole number');
  assert.equal(model.typedScore('100000001').error, 'a score is at most 100000000');
  assert.deepEqual(model.parseOptions(''), { options: {} });
  assert.deepEqual(model.parseOptions('{"MahJongScore": 10}'), { options: { MahJongScore: 10 } });
  assert.match(model.parseOptions('{MahJongScore: 10}').error, /not JSON/);
  assert.match(model.parseOptions('[1]').error, /a JSON object/);
  const calc = model.seed004Example();
  calc.players[1].hand = { ...calc.players[1].hand, concealed: ['5B', '5B', '2C', '3C', '3C'] };
  assert.equal(model.notReady(calc, 1), 'the winning tile must be one of the concealed tiles');
  assert.equal(model.notReady({ ...calc, win: { ...calc.win, tile: null } }, 1), 'choose the winning tile');
});

test('the page module loads without a document', async () => {
  const page = await import('../../crates/server/src/web/js/calculator.js');
  assert.equal(typeof page.mountCalculator, 'function');
});
