// The rules page (#/help, #/help/ANCHOR): how the game is played here and how
// a hand is scored, explained for a newcomer. The rules are seed 004's Chinese
// Classical game as the engine (crates/engine/src/rules/) applies it, with
// the variants of seeds 000-003 in brief.
//
// Every item the scoring window can show has an entry here whose id is
// scoringAnchor(its name), so that the window can link each line of a score
// to its explanation. The names are the engine's own (scoring.rs): an entry
// lists them exactly as the window prints them.

import { h, fill } from './dom.js';
import { tileElement } from './tiles.js';

/** The id of a scoring item's entry: its name in lower case, each run of other characters a '-'. */
export function scoringAnchor(name) {
  return String(name).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

// ---- small builders -----------------------------------------------------------

const p = (...children) => h('p', {}, ...children);
const kbd = (key) => h('kbd', {}, key);
const code = (text) => h('code', {}, text);
/** A link to another part of this page. */
const see = (anchor, text) => h('a', { href: `#/help/${anchor}` }, text);

/**
 * Tile pictures for an example. Each spec is one group of tiles, codes
 * separated by spaces (as tiles.js spells them); a group starting with '~' is
 * concealed (shaded, as the table shows concealed sets), and a code starting
 * with '*' is the tile that completed the hand (outlined).
 */
function example(caption, ...specs) {
  return h('div', { class: 'help-example' },
    specs.map((spec) => {
      const concealed = spec.startsWith('~');
      return h('span', { class: `set${concealed ? ' concealed' : ''}` },
        spec.replace(/^~/, '').trim().split(/\s+/).map((c) => {
          const el = tileElement(c.replace(/^\*/, ''), { small: true });
          if (c.startsWith('*')) el.classList.add('help-win');
          return el;
        }));
    }),
    caption ? h('span', { class: 'help-caption' }, caption) : null);
}

// ---- the scoring items --------------------------------------------------------
//
// `names`: what the scoring window prints for the item (scoring.rs), each of
// which gets an anchor; `value`: what it is worth by default; `text`: what it
// is; `example`: example(...) arguments; `only`: when it can appear at all.

/** Points for declared sets (scoring.rs's set_points): name, points, example. */
const SET_POINTS = [
  ['open pung of minors', 2, '5C 5C 5C'],
  ['open pung of majors', 4, '9D 9D 9D'],
  ['closed pung of minors', 4, '~3B 3B 3B'],
  ['closed pung of majors', 8, '~NW NW NW'],
  ['open kong of minors', 8, '6B 6B 6B 6B'],
  ['open kong of majors', 16, 'RD RD RD RD'],
  ['closed kong of minors', 16, '~4C 4C 4C 4C'],
  ['closed kong of majors', 32, '~1D 1D 1D 1D'],
  // Only with KongHas3Types, which tells a kong made from a claimed discard
  // from one made by adding to an exposed pung.
  ['claimed kong of minors', 8, '7D 7D 7D 7D'],
  ['claimed kong of majors', 16, 'EW EW EW EW'],
  ['annexed kong of minors', 8, '2B 2B 2B 2B'],
  ['annexed kong of majors', 16, '9C 9C 9C 9C'],
];

const PAIR_POINTS = [
  ['pair of dragons', 2, 'GD GD', 'any dragon'],
  ['pair of own wind', 2, 'SW SW', 'South\u2019s pair of South Wind'],
  ['pair of prevailing wind', 2, 'EW EW', 'South\u2019s pair of East Wind in the East round'],
  ['pair of own and prevailing wind', 4, 'EW EW', 'East\u2019s pair of East Wind in the East round'],
];

const POINTS = [
  {
    names: ['going Mah Jong'], value: '20 points',
    text: 'The basic score for a complete hand; only the winner has it. (Option MahJongScore; Millington gives 10.)',
    example: [null, '1B 2B 3B', '4C 4C 4C', '6D 7D 8D', 'WD WD WD', '~5B *5B'],
  },
  {
    names: ['seven pairs'], value: '20 points',
    text: 'Added to going Mah Jong for a winning hand of any seven pairs. Each pair that would score as a pair (dragons, your wind) scores too.',
    only: 'Only where seven pairs may go out (option SevenPairs; its value is SevenPairsVal).',
    example: [null, '~2B 2B', '~5B 5B', '~3C 3C', '~8D 8D', '~9D 9D', '~NW NW', '~RD *RD'],
  },
  {
    names: ['flowers and seasons'], value: '4 points each',
    text: 'Every flower and season you have set aside scores, whether you won or not.',
    only: 'Not when the server runs with --no-special-scores; animals score doubles instead (see below).',
    example: ['two bonus tiles: 8 points', '1F', '3S'],
  },
  {
    names: ['winning from wall'], value: '2 points',
    text: 'You drew the tile that completed your hand from the live wall yourself, rather than claiming a discard. (A loose tile after a kong earns a double instead: winning with loose tile.)',
  },
  {
    names: ['fishing the eyes'], value: '2 points, or 4 for a pair of majors',
    text: 'The tile that completed your hand made your pair. If it is a discard you must use it for the pair (As the pair): holding 5 6 7 7 of characters and going out on a 7, take the 7 as the pair, not in a chow, to score this.',
    example: ['the 7 claimed for the pair', '~5C 6C 7C', '~7C *7C'],
  },
  {
    names: ['filling the only place'], value: '2 points',
    text: 'Only one kind of tile could have completed your hand, and you got it: the middle of a run, the end of a run that cannot go the other way, or the partner of a single tile. A tile whose four copies are all in sight on the table counts as impossible, so if only one of your waits is still possible you have this.',
    example: ['only the 7 of circles would do', '~6D *7D 8D'],
  },
];

const DOUBLES = [
  {
    names: ['pung/kong of dragons'], value: '1 double each',
    text: 'Each pung or kong of dragons, in any hand.',
    example: [null, 'RD RD RD'],
  },
  {
    names: ['pung/kong of own wind'], value: '1 double',
    text: 'A pung or kong of your seat wind, in any hand.',
    example: ['West\u2019s own wind', 'WW WW WW'],
  },
  {
    names: ['pung/kong of prevailing wind'], value: '1 double',
    text: 'A pung or kong of the round\u2019s wind, in any hand. East\u2019s pung of East Wind in the East round has both this and the own-wind double.',
    example: ['in the East round', 'EW EW EW'],
  },
  {
    names: ['own flower', 'own season'], value: 'nothing by default',
    text: 'Your own flower or your own season, in any hand: the one numbered as your seat (1 East, 2 South, 3 West, 4 North).',
    only: 'Shown only when the option FlowersOwnEach gives them a value; each counts separately.',
    example: ['South\u2019s own flower and season', '2F', '2S'],
  },
  {
    names: ['own flower and season'], value: '1 double',
    text: 'Both your own flower and your own season, in any hand (option FlowersOwnBoth).',
    example: ['East\u2019s pair of bonus tiles', '1F', '1S'],
  },
  {
    names: ['all four flowers', 'all four seasons'], value: '1 double each',
    text: 'All four flowers, or all four seasons, in any hand (option FlowersBouquet).',
    example: [null, '1F 2F 3F 4F'],
  },
  {
    names: ['animal Cat', 'animal Mouse', 'animal Cockerel', 'animal Centipede'], value: '1 double each',
    text: 'Each animal tile you have set aside, in any hand (option AnimalScore). But an animal still in your hand when someone goes out is a penalty: see below.',
    only: 'Only in games with animal tiles (option Animals, as in the Shanghai rules).',
    example: [null, '1A', '3A'],
  },
  {
    names: ['Little Three Dragons'], value: '1 double',
    text: 'Two pungs or kongs of dragons and a pair of the third, in any hand. The two sets also score their own doubles, and the pair its points.',
    example: [null, 'RD RD RD', 'GD GD GD', '~WD WD'],
  },
  {
    names: ['Big Three Dragons'], value: '2 doubles',
    text: 'Pungs or kongs of all three dragons, in any hand, on top of a double for each set. A winner with them and no chow has a limit hand instead: Three Great Scholars.',
    example: [null, 'RD RD RD', 'WD WD WD', 'GD GD GD'],
  },
  {
    names: ['Little Four Joys'], value: '1 double',
    text: 'Pungs or kongs of three winds and a pair of the fourth, in any hand (seed 004 calls it Little Four Winds).',
    example: [null, 'EW EW EW', 'SW SW SW', 'WW WW WW', '~NW NW'],
  },
  {
    names: ['Big Four Joys'], value: '2 doubles',
    text: 'Pungs or kongs of all four winds, in any hand (seed 004\u2019s Big Four Winds). A winner with them has a limit hand, Four Blessing o\u2019er the Door, so this double shows only in a losing hand or in a game without a limit.',
  },
  {
    names: ['three concealed pungs'], value: '1 double',
    text: 'Three or more pungs or kongs made wholly from tiles you drew, in any hand. (With KongHas3Types a kong made from a claimed discard counts as concealed here.)',
    example: [null, '~2D 2D 2D', '~6C 6C 6C', '~SW SW SW'],
  },
  {
    names: ['no chows'], value: '1 double',
    text: 'The winner\u2019s four sets are all pungs or kongs.',
    example: [null, '3B 3B 3B', '7C 7C 7C', '~1D 1D 1D', 'GD GD GD', '~8B *8B'],
  },
  {
    names: ['no score hand'], value: '1 double',
    text: 'The winner\u2019s sets earn no points at all: four chows and a pair that scores nothing. Extras such as winning from wall, and flowers, do not spoil it.',
    example: [null, '1B 2B 3B', '3C 4C 5C', '~6D 7D *8D', '4D 5D 6D', '~7B 7B'],
  },
  {
    names: ['concealed hand'], value: '1 double',
    text: 'The winner exposed nothing: every set was made from tiles drawn from the wall, the tile that completed it included. A hand completed with a discard does not count, however concealed it was before. (Option ConcealedFully; some play 3 doubles.)',
  },
  {
    names: ['almost concealed hand'], value: 'nothing by default',
    text: 'A winning hand that was concealed until the discard that completed it.',
    only: 'Shown only when the option ConcealedAlmost gives it a value; with LosersPurity a concealed losing hand scores it too.',
  },
  {
    names: ['one suit with honours'], value: '1 double',
    text: 'The winner\u2019s tiles are all of one suit, apart from winds and dragons.',
    example: [null, '1C 2C 3C', '5C 5C 5C', '7C 8C 9C', 'EW EW EW', '~RD *RD'],
  },
  {
    names: ['one suit only'], value: '3 doubles',
    text: 'Every one of the winner\u2019s tiles is of a single suit. Fully concealed, it is a limit hand: Concealed Clear Suit.',
    example: [null, '1D 2D 3D', '4D 4D 4D', '5D 6D 7D', '9D 9D 9D', '~2D *2D'],
  },
  {
    names: ['all majors'], value: '1 double',
    text: 'The winner holds only majors: ones, nines, winds and dragons (so no chows).',
    example: [null, '1B 1B 1B', '9C 9C 9C', 'NW NW NW', 'WD WD WD', '~9D *9D'],
  },
  {
    names: ['all terminals'], value: '2 doubles',
    text: 'Only ones and nines, on top of the double for all majors. A winner with it has the limit hand Heads and Tails, so the double itself counts only without a limit (or for a loser, with LosersPurity).',
  },
  {
    names: ['winning with loose tile'], value: '1 double',
    text: 'The tile that completed the hand was a loose tile, the replacement drawn after a kong (after a flower too, with FlowersLoose).',
  },
  {
    names: ['winning with last tile'], value: '1 double',
    text: 'Going out on the last tile of the live wall, or on the discard made just after it (winning from the bottom of the sea; catching a fish from the bottom of the sea).',
  },
  {
    names: ['robbing a kong'], value: '1 double',
    text: 'Going out with the tile another player was adding to a pung to make a kong.',
  },
  {
    names: ['completing Original Call'], value: '1 double',
    text: 'Going out after making an Original Call with your first discard.',
  },
];

const LIMITS = [
  { names: ["Heaven's Blessing"], text: 'East goes out with the tiles dealt, before discarding anything.' },
  { names: ["Earth's Blessing"], text: 'Another player goes out on East\u2019s very first discard, before discarding anything.' },
  { names: ['Gathering Plum Blossom from the Roof'], text: 'Going out with the 5 of Circles drawn as a loose tile.', example: [null, '*5D'] },
  { names: ['Catching the Moon from the Bottom of the Sea'], text: 'Going out with the 1 of Circles drawn as the very last tile of the live wall.', example: [null, '*1D'] },
  { names: ['Scratching a Carrying Pole'], text: 'Going out by robbing a kong of 2 Bamboo.', example: [null, '*2B'] },
  { names: ['Kong upon Kong'], text: 'Declaring a kong, making another kong with its loose tile, and going out with the second loose tile (or with a longer chain of kongs).' },
  { names: ['Fourfold Plenty'], text: 'Four kongs (seed 004\u2019s Four Kongs).', example: [null, '3B 3B 3B 3B', '~8C 8C 8C 8C', 'RD RD RD RD', 'EW EW EW EW', '~4D *4D'] },
  { names: ['Buried Treasure'], text: 'No chows and nothing exposed: four concealed pungs or kongs and a pair, completed with a tile you drew.', example: [null, '~2B 2B 2B', '~6C 6C 6C', '~9D 9D 9D', '~WD WD WD', '~SW *SW'] },
  { names: ['Thirteen Unique Wonders'], text: 'One of each of the thirteen majors (the ones and nines of the three suits, the four winds, the three dragons) and a second of any one of them.', example: [null, '~1B 9B 1C 9C 1D 9D EW SW WW NW RD WD GD *GD'] },
  { names: ['Three Great Scholars'], text: 'Pungs or kongs of all three dragons, and no chows.', example: [null, 'RD RD RD', 'WD WD WD', 'GD GD GD', '5B 5B 5B', '~3C *3C'] },
  { names: ["Four Blessing o'er the Door"], text: 'Pungs or kongs of all four winds, and a pair.', example: [null, 'EW EW EW', 'SW SW SW', 'WW WW WW', 'NW NW NW', '~6D *6D'] },
  {
    names: ['All Honours', 'all honours'],
    text: 'Only winds and dragons. In a game without a limit the scoring window also lists all honours in lower case: 2 doubles, on top of the double for all majors (a loser scores those doubles too, with LosersPurity).',
    example: [null, 'EW EW EW', 'NW NW NW', 'RD RD RD', 'GD GD GD', '~WD *WD'],
  },
  { names: ['Heads and Tails'], text: 'Only ones and nines.', example: [null, '1B 1B 1B', '9B 9B 9B', '1C 1C 1C', '9D 9D 9D', '~1D *1D'] },
  { names: ['Concealed Clear Suit'], text: 'One suit only, and all concealed.', example: [null, '~1C 2C 3C', '~4C 4C 4C', '~5C 6C 7C', '~8C 8C 8C', '~9C *9C'] },
  { names: ["East's 13th consecutive win"], text: 'East goes out for the thirteenth hand running (wash-outs neither count nor break the run). The deal then passes anyway.' },
  { names: ['Imperial Jade'], text: 'Only green tiles: the 2, 3, 4, 6 and 8 of Bamboo, and the Green Dragon.', example: [null, '2B 3B 4B', '6B 6B 6B', '8B 8B 8B', 'GD GD GD', '~4B *4B'] },
  { names: ['Nine Gates'], text: 'Holding 1 1 1 2 3 4 5 6 7 8 9 9 9 of one suit, all concealed, and completing it with any tile of that suit.', example: [null, '~1D 1D 1D 2D 3D 4D 5D 6D 7D 8D 9D 9D 9D *5D'] },
  { names: ['Wriggling Snake'], text: 'In one suit: pungs or kongs of 1 and 9, the run from 2 to 8 made with chows, and a pair of 2, 5 or 8.', example: [null, '1B 1B 1B', '2B 3B 4B', '6B 7B 8B', '9B 9B 9B', '~5B *5B'] },
];

const PENALTIES = [
  {
    names: ['penalty: animals left in hand score nothing'], value: 'the hand scores 0',
    text: 'An animal tile still in your hand when someone goes out wipes out your whole score for the hand. Declare animals as soon as you draw them.',
    only: 'Only in games with animal tiles (option Animals).',
  },
];

/** Every name the scoring window can show, in the page's order (the scoring section's index lists them). */
export const SCORING_NAMES = [
  ...POINTS.slice(0, 1).flatMap((e) => e.names),
  ...SET_POINTS.map(([name]) => name),
  ...PAIR_POINTS.map(([name]) => name),
  ...POINTS.slice(1).flatMap((e) => e.names),
  ...DOUBLES.flatMap((e) => e.names),
  ...LIMITS.flatMap((e) => e.names),
  ...PENALTIES.flatMap((e) => e.names),
];

// ---- the page -------------------------------------------------------------------

/** Ids given so far in one drawing of the page: 'All Honours' and 'all honours' share one. */
let usedIds = new Set();

/** `attrs` with the anchor of `name` as its id, unless another element has it already. */
function anchored(name, attrs = {}) {
  const id = scoringAnchor(name);
  if (usedIds.has(id)) return attrs;
  usedIds.add(id);
  return { ...attrs, id };
}

function entry({ names, value, text, only, example: ex }, defaultValue) {
  const [first, ...more] = names;
  return h('div', anchored(first, { class: 'help-item' }),
    h('h4', {},
      h('span', { class: 'help-names' }, first, more.map((n) => [h('span', { class: 'help-sep', 'aria-hidden': 'true' }, ' · '), h('span', anchored(n), n)])),
      h('span', { class: 'help-value' }, value ?? defaultValue)),
    h('p', {}, text),
    only ? h('p', { class: 'help-only' }, only) : null,
    ex ? example(...ex) : null);
}

/** A table of set or pair items: each row is the anchor of its name. */
function pointsTable(caption, rows) {
  return h('table', { class: 'data help-table' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'In the scoring window'), h('th', { scope: 'col', class: 'num' }, 'Points'), h('th', { scope: 'col' }, 'For example'))),
    h('tbody', {}, rows.map(([name, points, spec, note]) =>
      h('tr', anchored(name), h('th', { scope: 'row' }, name), h('td', { class: 'num' }, points), h('td', {}, example(note ?? null, spec))))));
}

function section(id, title, ...children) {
  return h('section', { id, 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title`, tabindex: -1 }, title), ...children);
}

function subsection(id, title, ...children) {
  return h('section', { id, 'aria-labelledby': `${id}-title` }, h('h3', { id: `${id}-title`, tabindex: -1 }, title), ...children);
}

const CONTENTS = [
  ['tiles', 'The tiles'],
  ['deal', 'The deal and the wall'],
  ['turn', 'A turn'],
  ['sets', 'Sets'],
  ['claiming', 'Claiming discards'],
  ['going-out', 'Going out: Mah-Jong'],
  ['showing', 'When someone else goes out'],
  ['scoring', 'Scoring', [['points', 'Points'], ['doubles', 'Doubles'], ['limits', 'Limit hands'], ['penalties', 'Penalties']]],
  ['settlement', 'Settlement: who pays whom'],
  ['rounds', 'Rounds, winds and East\u2019s extra hands'],
  ['variants', 'Variants'],
  ['keys', 'Keyboard shortcuts'],
];

function contents() {
  const item = ([id, title, sub]) => h('li', {}, h('a', { href: `#/help/${id}` }, title), sub ? h('ol', {}, sub.map(item)) : null);
  return h('nav', { class: 'help-toc card', 'aria-labelledby': 'help-contents' },
    h('h2', { id: 'help-contents' }, 'Contents'),
    h('ol', {}, CONTENTS.map(item)));
}

const KEYS = [
  [['\u2190', '/', '\u2192'], 'Select the tile to the left or right in your hand.'],
  [['Shift', '+', '\u2190', '/', '\u2192'], 'Move the selected tile: arrange your hand as you like.'],
  [['Enter'], 'The usual answer of the moment: Discard (the selected tile), No claim, Ready, the first flower to declare, Show tiles. Space does the same.'],
  [['d'], 'Discard the selected tile (or double-click it).'],
  [['o'], 'Discard the selected tile and make an Original Call.'],
  [['f'], 'Finish declaring flowers and seasons.'],
  [['k'], 'Kong: declare a concealed kong, or claim a discard for a kong.'],
  [['a'], 'Add the drawn tile to its exposed pung.'],
  [['n'], 'No claim: let the discard go.'],
  [['c'], 'Chow: claim the discard for a chow; going out on a discard, use it in a chow.'],
  [['p'], 'Pung: claim the discard for a pung; going out on a discard, use it as a pung. In East\u2019s tile swap, pass the selected tile.'],
  [['m'], 'Mah Jong: go out on your turn, claim the discard to go out, or rob a kong.'],
  [['e'], 'Going out on a discard, use it as the pair (the eyes).'],
  [['s'], 'Going out on a discard, use it to complete a special hand; after someone has gone out, show your tiles.'],
  [['r'], 'Ready for the next hand (in the scoring window too).'],
];

function body() {
  return [
    h('h1', { id: 'help-top', tabindex: -1 }, 'How to play'),
    p('The game here is the Chinese Classical Mah-Jong of the Unix programs mj-server and xmj: four players, each playing for themselves, race to complete a hand of sets from 144 tiles. This page explains the rules as this server applies them, and every item of a score. The server checks every move, so you can learn as you play: the buttons only ever offer what is allowed.'),
    contents(),

    section('tiles', 'The tiles',
      p('There are three suits, numbered 1 to 9, with four copies of each tile:'),
      h('dl', { class: 'help-suits' },
        h('dt', {}, 'Bamboo'), h('dd', {}, example(null, '1B 2B 3B 4B 5B 6B 7B 8B 9B')),
        h('dt', {}, 'Characters'), h('dd', {}, example(null, '1C 2C 3C 4C 5C 6C 7C 8C 9C')),
        h('dt', {}, 'Circles'), h('dd', {}, example(null, '1D 2D 3D 4D 5D 6D 7D 8D 9D'))),
      p('And the honours, also four of each: the four winds and the three dragons.'),
      example('East, South, West, North; Red, White, Green', 'EW SW WW NW', 'RD WD GD'),
      p('The ones and nines are the ', h('strong', {}, 'terminals'), '. Terminals and honours together are the ', h('strong', {}, 'majors'), '; the 2 to 8 of each suit are the ', h('strong', {}, 'minors'), '. Sets of majors score twice what sets of minors do.'),
      p('Last come eight ', h('strong', {}, 'bonus tiles'), ', one of each: four flowers (plum, orchid, chrysanthemum, bamboo) and four seasons (spring to winter). They never form sets. Each is numbered 1 to 4, and number 1 belongs to East, 2 to South, 3 to West and 4 to North: that is your own flower and your own season. A table can be set to play without them (option Flowers), and the Shanghai rules add four animals.'),
      example('the flowers and seasons', '1F 2F 3F 4F', '1S 2S 3S 4S'),
      p(h('span', { class: 'help-tip' }, 'With a mouse, point at a tile, here or at the table, to see its name.'))),

    section('deal', 'The deal and the wall',
      p('Each player has a seat wind: East, South, West and North, which is also the order of play. East is the dealer. The server shuffles the tiles and builds the wall; everyone is dealt 13 tiles, and East a 14th, so East begins by discarding.'),
      p('Before play starts, each player in turn sets aside the flowers and seasons they were dealt (the Declare buttons, then Finish declaring), drawing a replacement for each; a concealed kong dealt to you can be declared then too.'),
      p('The last 14 tiles of the wall are the ', h('strong', {}, 'dead wall'), '. The replacements for kongs, the ', h('strong', {}, 'loose tiles'), ', come from it, and it is topped up from the live wall so that it never runs short. (With the option DeadWall16 it starts with 16 tiles and is never topped up.) Replacements for flowers come from the live wall, unless the option FlowersLoose is set.'),
      p('When the live wall runs out and nobody has gone out, the hand is a ', h('strong', {}, 'wash-out'), ': nobody scores or pays, and the same East deals again.')),

    section('turn', 'A turn',
      p('On your turn you draw the next tile from the wall, so that you hold 14, and then discard one face up, back to 13. Unless someone claims your discard, play moves to the next player.'),
      p('If you draw a flower or season, declare it: it goes beside your hand and you draw another tile. You may do this at any time on your turn after drawing, but there is no reason to wait.'),
      p('After drawing (but not after claiming a discard) you may also declare a kong: four of a kind all in your hand (a concealed kong), or the fourth tile of a pung you have already exposed (adding to the pung). Either way you draw a loose tile to make up the count, and then discard.'),
      p(h('strong', {}, 'Original Call. '), 'If your hand is fully concealed and one tile short of complete when you make your first discard, you may discard with Discard and call. From then on you may not change your hand: each tile you draw that does not complete it is discarded, and you may claim a discard only to go out. Going out earns an extra double. The server does not check that your hand really was one tile short, so a mistaken call can leave you unable to go out.')),

    section('sets', 'Sets',
      p('A hand is built from sets. Each kind, with what it needs:'),
      h('dl', { class: 'help-defs' },
        h('dt', {}, 'Chow'), h('dd', {}, 'Three tiles in a row of one suit. Honours cannot make chows. A chow scores nothing, but is often the easiest set to make.', example(null, '4C 5C 6C')),
        h('dt', {}, 'Pung'), h('dd', {}, 'Three of a kind.', example(null, '7B 7B 7B', 'RD RD RD')),
        h('dt', {}, 'Kong'), h('dd', {}, 'Four of a kind. It counts as one set, so each kong earns an extra draw: the loose tile. Kongs score four times what pungs do.', example(null, '2D 2D 2D 2D')),
        h('dt', {}, 'Pair'), h('dd', {}, 'Two of a kind, also called the eyes. A complete hand has exactly one.', example(null, 'WW WW'))),
      p('A set made with a claimed discard is ', h('strong', {}, 'exposed'), ' (open) and lies face up for everyone to see. A set made entirely from tiles you drew is ', h('strong', {}, 'concealed'), ' (closed) and scores more. On this page, as at the table, a concealed set is shaded:'),
      example('an exposed pung, then a concealed one', '8C 8C 8C', '~8D 8D 8D')),

    section('claiming', 'Claiming discards',
      p('When a tile is discarded, any other player who can use it at once may claim it:'),
      h('ul', {},
        h('li', {}, h('strong', {}, 'Chow'), ': only the next player in turn, with two tiles that make a run with it. If the tile fits more than one run in your hand, you choose which.'),
        h('li', {}, h('strong', {}, 'Pung'), ' or ', h('strong', {}, 'kong'), ': any player holding two (or three) of the same tile.'),
        h('li', {}, h('strong', {}, 'Mah Jong'), ': any player whose hand the tile completes, whether it makes a chow, a pung or the pair.')),
      p('The claimant lays the set out face up and discards, and play continues from them: anyone in between misses a turn. ', h('strong', {}, 'Mah Jong beats a pung or kong, which beats a chow'), '; between two claims of the same kind, the player first in turn after the discarder wins.'),
      p('A discard waits for every other player\u2019s answer, claim or no claim, before the best claim is granted. Answers are final: a claim cannot be taken back. The claim panel shows the discard and a bar for the time left: 15 seconds by default (set when a table is made, or no limit), plus a little grace for the network. Whoever has not answered in time has passed.'),
      p('Here you are asked only when your tiles allow a claim: on any other discard the table passes for you at once. If you would rather answer every discard yourself, as in xmj, turn on the \u201cAsk every discard\u201d button in the bar above the table.'),
      p(h('strong', {}, 'Robbing a kong. '), 'When a player adds a tile to an exposed pung to make a kong, anyone who could go out with that tile may take it (Rob the kong: Mah Jong!); everyone answers first, as for a discard. A concealed kong can be robbed only for Thirteen Unique Wonders.')),

    section('going-out', 'Going out: Mah-Jong',
      p('A complete hand is ', h('strong', {}, 'four sets and a pair'), ': 14 tiles, and one more for each kong. Complete it with a tile you draw and press Mah Jong! on your turn; or claim the discard that completes it and say how it is used (in a chow, as a pung, or as the pair). Then lay out the rest of your concealed tiles set by set, so that the hand can be scored.'),
      example('a complete hand', '1B 2B 3B', '4C 4C 4C', '6D 7D 8D', 'WD WD WD', '~5B *5B'),
      p('Two special hands go out without that shape:'),
      h('ul', {},
        h('li', {}, see(scoringAnchor('Thirteen Unique Wonders'), 'Thirteen Unique Wonders'), ': one of each major tile and a second of any of them, a limit hand.'),
        h('li', {}, see(scoringAnchor('seven pairs'), 'Seven pairs'), ': any seven pairs, when the table plays with the option SevenPairs.')),
      p('Only one player goes out in a hand; the hand then ends and everyone is scored.')),

    section('showing', 'When someone else goes out',
      p('Everyone\u2019s hand is scored, not only the winner\u2019s, because the losers also settle with one another. So when another player goes out, lay out what you hold: form each concealed set with its button (a pung, a chow, a pair), then show your tiles. Only the sets you form count; tiles left over score nothing. A losing hand may form several scoring pairs. A set once formed cannot be taken back, and a hand whose tiles are all in sets is scored at once.'),
      p('A losing hand scores its sets, pairs and bonus tiles and the doubles marked \u201cin any hand\u201d below; the points for going out and the doubles for the winner only (no chows, one suit, concealed hand and so on) are not for losers.')),

    section('scoring', 'Scoring',
      p('A hand is scored in three steps:'),
      h('ol', {},
        h('li', {}, h('strong', {}, 'Add up the points'), ': for going out, for sets and pairs, for bonus tiles, and for how the winner went out.'),
        h('li', {}, h('strong', {}, 'Double'), ' the total once for each double the hand earns.'),
        h('li', {}, h('strong', {}, 'Cap it at the limit'), ', 1000 by default (option ScoreLimit). Some rare hands are worth the limit outright, whatever their points. A table can also play without a limit (NoLimit).')),
      h('div', { class: 'card help-worked' },
        h('h3', {}, 'An example'),
        p('West goes out in the East round by drawing the 7 of Circles, holding an exposed pung of Red Dragons, an exposed chow, a concealed pung of 2 Bamboo, a concealed chow, a pair of West Wind and the flower numbered 3:'),
        example(null, 'RD RD RD', '3C 4C 5C', '~2B 2B 2B', '~6D *7D 8D', '~WW WW', '3F'),
        p('Points: going Mah Jong 20, the dragon pung 4, the concealed pung of minors 4, the pair of own wind 2, the flower 4, winning from the wall 2, and filling the only place 2 (only the 7 would do): 38. Doubles: one, for the dragon pung. Score: 38 \u00d7 2 = 76.')),
      p('After each hand the scoring window lists every item of every hand. Each item\u2019s name there links to its entry below. The items:'),
      h('details', { class: 'help-index' }, h('summary', {}, 'Every item, as the scoring window names it'),
        h('ul', {}, SCORING_NAMES.filter((n, i, all) => all.findIndex((m) => scoringAnchor(m) === scoringAnchor(n)) === i)
          .map((n) => h('li', {}, see(scoringAnchor(n), n))))),

      subsection('points', 'Points',
        p('Sets score by what they are made of and how they were made; chows score nothing.'),
        pointsTable('Pungs and kongs', SET_POINTS),
        p(h('span', { class: 'help-only' }, 'The claimed and annexed kongs appear only with the option KongHas3Types, which counts a kong made from a claimed discard as concealed for the doubles (but not for points).')),
        pointsTable('Pairs that score (any other pair scores nothing; a loser may score several)', PAIR_POINTS),
        POINTS.map((e) => entry(e))),

      subsection('doubles', 'Doubles',
        p('Each double doubles the points once: 3 doubles multiply them by 8. Unless an entry says \u201cin any hand\u201d, it is for the winner only. The option LosersPurity lets losers score the doubles for one suit, majors, terminals, honours and a concealed hand too.'),
        DOUBLES.map((e) => entry(e)),
        h('div', { class: 'help-item help-xref' }, h('h4', {}, h('span', { class: 'help-names' }, 'all honours'), h('span', { class: 'help-value' }, '2 doubles')),
          p('See ', see(scoringAnchor('All Honours'), 'All Honours'), ' among the limit hands.'))),

      subsection('limits', 'Limit hands',
        p('These winning hands score the limit (1000 by default), and in a game with a limit nothing else in the hand is counted. Without a limit they are worth at least the limit, more if their points and doubles come to more.'),
        LIMITS.map((e) => entry(e, 'limit'))),

      subsection('penalties', 'Penalties',
        PENALTIES.map((e) => entry(e)))),

    section('settlement', 'Settlement: who pays whom',
      p('When someone has gone out, scores are paid in points:'),
      h('ol', {},
        h('li', {}, 'Each loser pays the winner the winner\u2019s score.'),
        h('li', {}, 'The losers settle among themselves: of each two losers, the one with the lower score pays the other the difference.'),
        h('li', {}, 'Every payment to or from East is doubled. So East, winning, is paid double by everyone, and pays double when losing. The limit caps a hand\u2019s score, not the payment: East can pay or receive 2000.')),
      h('div', { class: 'card help-worked' },
        h('h3', {}, 'An example'),
        p('West goes out with 76 (the hand above). The losers\u2019 hands score East 10, South 24, North 0.'),
        h('table', { class: 'data help-table' },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Payment'), h('th', { scope: 'col', class: 'num' }, 'Amount'), h('th', { scope: 'col' }, 'Why'))),
          h('tbody', {},
            [['East pays West', 152, '76, doubled for East'], ['South pays West', 76, ''], ['North pays West', 76, ''],
              ['East pays South', 28, '24 \u2212 10, doubled for East'], ['North pays East', 20, '10 \u2212 0, doubled for East'], ['North pays South', 24, '24 \u2212 0']]
              .map(([who, amount, why]) => h('tr', {}, h('td', {}, who), h('td', { class: 'num' }, amount), h('td', {}, why))))),
        p('In all: West +304, East \u2212160, South \u221224, North \u2212120.')),
      h('h3', { id: 'cannon', tabindex: -1 }, 'Letting off a cannon'),
      p('Some hands give away what they are after: three exposed sets all of one suit, or all of honours, of terminals or of green tiles; three sets of winds; two sets of dragons. And late in the hand, with four live tiles or fewer left, any tile not discarded before is risky for everyone. If you discard a tile that such a hand wants, and its player goes out with it making the hand that was threatened, while you had a safe tile to discard instead, you have let off a cannon: you pay the winner for all three losers, and the losers do not settle among themselves. The server works out whether you had a choice; you never need to plead.'),
      p('A wash-out is not settled: nobody pays. A table can change the payments: without LosersSettle losers pay only the winner, without EastDoubles East is paid like anyone else, and with DiscDoubles (the Singapore style) the discarder of the winning tile pays double, and on a win from the wall everyone does.')),

    section('rounds', 'Rounds, winds and East\u2019s extra hands',
      p('A game has four rounds unless the table was made with fewer. Each round has a ', h('strong', {}, 'prevailing wind'), ': East in the first round, then South, West and North. Sets and pairs of the prevailing wind score like those of your own wind.'),
      p('The deal stays with East after East goes out and after a wash-out: East then plays an ', h('strong', {}, 'extra hand'), '. Otherwise the deal passes: the next player becomes East and every seat wind moves on one. After East\u2019s thirteenth win in a row the deal passes anyway. A round ends when the deal comes back to the player who was East at its start; the game ends after the last round, and the final standings are the players\u2019 total scores.'),
      p('Being East is a chance and a risk: every payment East makes or receives is doubled.')),

    section('variants', 'Variants',
      p('A table is made with a set of rules (the Rules choice in the lobby). Everything above is chinese-classical, the default. The others follow other books and house rules, mostly in how scores are rounded and settled; and the manager of a table can change single options (the names on this page) between hands.'),
      h('ul', {},
        h('li', {}, h('strong', {}, 'Rounding'), ' (american-modern, japanese-rounding, australian-rounding): the basic points may be rounded up to ten before doubling (22 becomes 30), and the score, or each payment after East\u2019s doubling, rounded off or up to 10 or 100. Options RoundBeforeDoubles, RoundMode, RoundUnit, RoundAtPayTime, RoundSixUp.'),
        h('li', {}, h('strong', {}, 'Paying'), ': losers may pay each other their whole scores instead of the differences, which comes to the same in the end (PaymentItemisation); the discarder of the winning tile may pay for everyone, or alone (DiscarderPays); several players may go out on one discard, each paid as if alone (MultipleWinners).'),
        h('li', {}, h('strong', {}, 'East\u2019s extra hands'), ': a bonus for each of East\u2019s extra hands, paid to East for winning one (or to any winner), on top of the settlement and never doubled, limited or rounded (DealerBonus, with its Japanese and Taiwanese forms); the deal may pass even after East wins or a wash-out; a hand may need a minimum number of doubles to go out, raised from East\u2019s fifth extra hand (MinimumDoubles).'),
        h('li', {}, h('strong', {}, 'Shanghai expat rules'), ' (shanghai-expat): four animal tiles worth a double each, and a penalty for keeping one; East may swap tiles with the others before play; an ordinary hand may hold only one chow and one suit; basic points rounded up to ten; a double on the dice doubles every score and the limit; payments rounded to the nearest 100; losers whose scores differ by less than 50 pay each other nothing.'))),

    section('keys', 'Keyboard shortcuts',
      p('At the table, when the chat box does not have the focus. The letter of each shortcut is underlined on its button.'),
      h('table', { class: 'data help-table help-keys' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'What it does'))),
        h('tbody', {}, KEYS.map(([keys, what]) => h('tr', {},
          h('td', {}, keys.map((k) => (k === '+' || k === '/' ? ` ${k} ` : kbd(k)))), h('td', {}, what))))),
      p('You can also drag tiles to rearrange your hand, and double-click a tile to discard it. In a replay, ', kbd('\u2190'), ' and ', kbd('\u2192'), ' step back and forward.')),
  ];
}

// The entry flashed last, and when its highlight ends.
let flashed = null;
let flashTimer = null;

function unflash() {
  clearTimeout(flashTimer);
  flashed?.classList.remove('help-flash');
  flashed = null;
}

/**
 * Shows the rules page in `view`, scrolled to `anchor` (a section's id or a
 * scoring item's scoringAnchor) if given, which is highlighted for a moment.
 */
export function showHelp(view, anchor) {
  // The contents' links change the hash, which routes here again: the page
  // already shown only needs scrolling.
  if (!view.querySelector('#help-page')) {
    usedIds = new Set();
    fill(view, h('article', { class: 'help', id: 'help-page' }, body()));
  }
  unflash();
  const target = anchor ? document.getElementById(anchor) : null;
  if (!target || !view.contains(target)) {
    window.scrollTo(0, 0);
    return { dispose: unflash };
  }
  // An item's other names are spans inside the item: show the whole item.
  const item = target.closest('.help-item, tr');
  const shown = item ?? target;
  shown.scrollIntoView({ block: 'start' });
  // The focus follows, so that Tab and screen readers go on from here.
  const focusable = shown.matches('section') ? shown.querySelector('h2, h3') : shown;
  if (!focusable.hasAttribute('tabindex')) focusable.setAttribute('tabindex', '-1');
  focusable.focus({ preventScroll: true });
  if (item) {
    flashed = item;
    item.classList.add('help-flash');
    flashTimer = setTimeout(unflash, 2600);
  }
  return { dispose: unflash };
}
