// The moves on offer, in the dock under the table: the claim panel (claim a
// discard or a robbed kong, or not, before the timer runs out) and the row
// of moves for every other decision (declare, discard, choose a chow, lay
// out the hand...). What is offered comes from the server's prompt alone: a
// button only for a move it lists. movesOffered works that out as plain
// data (labels, accelerator keys, ids, what a click does), which node tests
// read; renderActions only turns it into buttons wired to the screen.

import { h, fill, keyButton } from './dom.js';
import { setTiles, claimWord, chowLow, winnersOf } from './state.js';
import { tileElement, tileName } from './tiles.js';
import { listed } from './log_text.js';
import { whoIs } from './narration.js';

/** A chow's position in words: where the claimed tile sits in it. */
export const POSITION_WORDS = { Lower: 'lowest', Middle: 'middle', Upper: 'highest' };

// A move is one of:
//   { hint: text }                         a line of explanation
//   { label, key?, attrs, does }           a button; with `key` (even '') an accelerator
//                                          button (keyButton), else a plain one; `does` is
//                                          { act: action } | { discard: calling } | { ready: true }
//   { chow: { action, low, label, isDefault } }   a chow's button, its tiles drawn

/**
 * The moves the prompt offers the viewer of `state`, and the claim panel
 * when the prompt asks about a discard or a kong.
 * @param {object} on
 * @param {object|null} on.prompt the seat's latest prompt (null before any)
 * @param {object} on.state the table state
 * @param {string|null} on.selectedTile the tile selected in our hand
 * @param {boolean} on.replay a replay's screen
 * @returns {{moves: object[], claim: object|null}}
 */
export function movesOffered({ prompt: p, state, selectedTile, replay }) {
  const me = state.seat;
  const who = (x) => whoIs(state, x);
  if (me == null) {
    return {
      moves: [{ hint: replay ? 'A replay of a finished game: every hand is shown. Step with the buttons or the arrow keys.' : 'You are watching: every concealed tile stays hidden until it is shown.' }],
      claim: null,
    };
  }
  const moves = [];
  let claim = null;
  if (p?.ready) {
    const paused = state.table.paused;
    const first = !state.game?.hand;
    moves.push({ label: paused ? 'Ready to resume' : first ? 'Ready: deal the first hand' : 'Ready for the next hand', key: 'r', does: { ready: true }, attrs: { class: 'primary big', id: 'ready', dataset: { default: '1' } } });
  }
  const actions = p?.actions ?? [];
  const of = (kind) => actions.filter((a) => a.action === kind);
  const act = (a) => ({ act: a });
  switch (p?.decision) {
    case 'declare':
      // Flowers and seasons first (Enter declares the first), then finish.
      of('declare_bonus').forEach((a, i) => moves.push({ label: `Declare ${tileName(a.tile)}`, does: act(a), attrs: { class: 'primary', dataset: { action: 'declare_bonus', ...(i === 0 ? { default: '1' } : {}) } } }));
      for (const a of of('declare_closed_kong')) moves.push({ label: `Kong of ${tileName(a.tile)}`, does: act(a), attrs: { dataset: { action: 'declare_closed_kong' } } });
      for (const a of of('finish_declaring')) {
        const bonus = of('declare_bonus').length;
        moves.push({ label: bonus ? 'Finish declaring' : 'Finish declaring (nothing to declare)', key: 'f', does: act(a), attrs: { class: bonus ? '' : 'primary', id: 'finish-declaring', dataset: bonus ? {} : { default: '1' } } });
      }
      break;
    case 'discard': {
      const tile = selectedTile;
      const canDiscard = of('discard').some((a) => a.tile === tile && !a.calling);
      const canCall = of('discard').some((a) => a.tile === tile && a.calling);
      if (of('mah_jong').length) moves.push({ label: 'Mah Jong!', key: 'm', does: act(of('mah_jong')[0]), attrs: { class: 'primary big', id: 'mah-jong' } });
      moves.push({ label: tile ? `Discard ${tileName(tile)}` : 'Discard (select a tile)', key: 'd', does: { discard: false }, attrs: { class: 'primary', id: 'discard', disabled: !canDiscard, dataset: { default: '1' } } });
      if (of('discard').some((a) => a.calling)) moves.push({ label: 'Discard and call', key: 'o', does: { discard: true }, attrs: { id: 'original-call', disabled: !canCall, title: 'Original Call: declare your hand one tile from Mah-Jong' } });
      for (const a of of('declare_closed_kong')) moves.push({ label: `Kong of ${tileName(a.tile)}`, key: 'k', does: act(a), attrs: { dataset: { action: 'declare_closed_kong' } } });
      for (const a of of('add_to_pung')) moves.push({ label: `Add ${tileName(a.tile)} to its pung`, key: 'a', does: act(a), attrs: { dataset: { action: 'add_to_pung' } } });
      for (const a of of('declare_bonus')) moves.push({ label: `Declare ${tileName(a.tile)}`, does: act(a), attrs: { class: 'primary', dataset: { action: 'declare_bonus' } } });
      moves.push({ hint: 'Select a tile (←/→), then Discard (or double-click it).' });
      break;
    }
    case 'answer_discard':
    case 'answer_kong':
      claim = claimOffered(p, state);
      break;
    case 'choose_chow_position': {
      const tile = claimedTileForChow(state);
      moves.push({ hint: tile ? `Your chow claim was granted: choose which chow ${tileName(tile)} makes.` : 'Choose your chow:' });
      of('choose_chow_position').forEach((a, i) => moves.push(chowMove(a, a.position, tile, i === 0)));
      break;
    }
    case 'use_discard': {
      const tile = state.game.hand.pending_discard;
      moves.push({ hint: `Your hand is complete: choose how the winning ${tile ? tileName(tile) : 'tile'} is used.` });
      const uses = of('use_discard');
      // A chow "anywhere" would only ask again which one: the chows are offered one by one.
      const exact = uses.filter((a) => !(typeof a.as === 'object' && a.as.chow === null));
      const offered = exact.some((a) => typeof a.as === 'object') ? exact : uses;
      offered.forEach((a, i) => {
        const use = a.as;
        const attrs = { class: 'primary', dataset: { action: 'use_discard', ...(i === 0 ? { default: '1' } : {}) } };
        if (use === 'pair') moves.push({ label: 'As the pair (eyes)', key: 'e', does: act(a), attrs });
        else if (use === 'pung') moves.push({ label: 'As a pung', key: 'p', does: act(a), attrs });
        else if (use === 'special_set') moves.push({ label: 'Completing a special hand', key: 's', does: act(a), attrs });
        else if (use.chow === null) moves.push({ label: 'In a chow', key: 'c', does: act(a), attrs });
        else moves.push(chowMove(a, use.chow, tile, i === 0));
      });
      break;
    }
    case 'choose_swap':
      moves.push({ hint: 'Tile swap: how many lots?' });
      for (const a of of('choose_swap')) moves.push({ label: a.lots ? `${a.lots} lot${a.lots > 1 ? 's' : ''}` : 'No swap', does: act(a), attrs: { class: a.lots ? '' : 'primary', dataset: { action: 'choose_swap', lots: a.lots } } });
      break;
    case 'pass_tile': {
      const tile = selectedTile;
      const action = of('pass_tile').find((a) => a.tile === tile);
      const swap = state.game?.hand?.swap;
      if (swap?.lots) moves.push({ hint: `Tile swap, lot ${swap.lot} of ${swap.lots}: choose a tile to pass ${swap.direction === 'across' ? 'across the table' : `to the ${swap.direction}`}.` });
      // Disabled without a tile that may be passed: a click then does nothing.
      moves.push({ label: tile ? `Pass ${tileName(tile)} face down` : 'Pass a tile (select it)', key: 'p', does: act(action), attrs: { class: 'primary', disabled: !action, dataset: { default: '1' }, id: 'pass-tile' } });
      break;
    }
    case 'declare_winning_hand':
    case 'show_hand': {
      const winners = winnersOf(state.game.hand).filter((w) => w !== me);
      const sets = of('form_closed_set');
      moves.push({ hint: p.decision === 'declare_winning_hand'
        ? 'You went Mah-Jong: lay out your concealed sets one by one, so that your hand can be scored.'
        : `${winners.length ? listed(winners.map(who)) : 'Someone'} went Mah-Jong. Lay out the sets you hold (they score), then show your tiles.` });
      // Enter does the usual thing: the first set, and once none is left, show the tiles.
      sets.forEach((a, i) => moves.push({ label: describeClosedSet(a.set), does: act(a), attrs: { class: 'primary', dataset: { action: 'form_closed_set', ...(i === 0 ? { default: '1' } : {}) } } }));
      for (const a of of('show_tiles')) moves.push({ label: sets.length ? 'Show tiles as they are' : 'Show tiles', key: 's', does: act(a), attrs: { class: sets.length ? '' : 'primary', id: 'show-tiles', dataset: sets.length ? {} : { default: '1' } } });
      break;
    }
    default:
      if (!p?.ready && state.table.state === 'playing') {
        const hand = state.game?.hand;
        const answered = hand?.my_answer;
        if (answered && typeof answered === 'object') moves.push({ hint: `You claimed ${claimWord(answered.claim)} Waiting for the others…` });
        else if (hand && hand.phase !== 'finished') moves.push({ hint: `Waiting for ${who(hand.to_act)}…` });
      }
  }
  return { moves, claim };
}

/**
 * The claim panel for a prompt that asks about a discard (or a kong that
 * may be robbed): "No claim" first (Enter's), then the claims it lists; null
 * when it lists none of them.
 * @param {object} p the prompt (answer_discard or answer_kong)
 * @param {object} state the table state
 * @returns {{claimable: object|null, question: string, deadline: object|null, buttons: object[]}|null}
 */
export function claimOffered(p, state) {
  const c = p.claimable;
  const actions = p.actions;
  const pass = actions.find((a) => a.action === 'pass');
  const claims = actions.filter((a) => a.action === 'claim');
  const find = (f) => claims.filter((a) => f(a.claim));
  const buttons = [];
  if (pass) buttons.push({ label: 'No claim', key: 'n', does: { act: pass }, attrs: { id: 'no-claim', dataset: { default: '1' } } });
  const chows = find((cl) => typeof cl === 'object' && 'chow' in cl);
  const anyChow = chows.find((a) => a.claim.chow === null);
  if (anyChow) buttons.push({ label: 'Chow', key: 'c', does: { act: anyChow }, attrs: { id: 'claim-chow', class: 'primary' } });
  else for (const a of chows) buttons.push({ label: `Chow (${POSITION_WORDS[a.claim.chow]})`, does: { act: a }, attrs: { class: 'primary' } });
  for (const [claim, label, key] of [['pung', 'Pung', 'p'], ['kong', 'Kong', 'k'], ['mah_jong', c?.kong ? 'Rob the kong: Mah Jong!' : 'Mah Jong!', 'm']]) {
    const a = find((cl) => cl === claim)[0];
    if (a) buttons.push({ label, key, does: { act: a }, attrs: { id: `claim-${claim.replace('_', '-')}`, class: 'primary' } });
  }
  if (!buttons.length) return null;
  return {
    claimable: c,
    question: c ? `${whoIs(state, c.from)} ${c.kong ? 'declared a kong of' : 'discarded'} ${tileName(c.tile)}. Claim it?` : 'Claim?',
    deadline: p.deadline,
    buttons,
  };
}

/**
 * The tile a granted chow claim is for: the claimed discard.
 * @param {object} state the table state
 * @returns {string|null}
 */
export function claimedTileForChow(state) {
  const hand = state.game?.hand;
  return hand?.claimable?.tile ?? hand?.pending_discard ?? null;
}

/**
 * A chow's label: which chow the claimed `tile` makes at `position`.
 * @param {string} position Lower, Middle or Upper
 * @param {string|null} tile the claimed tile
 * @returns {string}
 */
export function chowLabel(position, tile) {
  return tile ? `Chow with ${tileName(tile)} as the ${POSITION_WORDS[position]} tile` : position;
}

/** The move for one chow `action`, with the lowest tile of its set when the claimed tile is known. */
function chowMove(action, position, tile, isDefault) {
  return { chow: { action, low: tile ? chowLow(tile, position) : null, label: chowLabel(position, tile), isDefault } };
}

/**
 * A concealed set as a button names it when the hand is laid out.
 * @param {object|string} set a form_closed_set action's set
 * @returns {string}
 */
export function describeClosedSet(set) {
  if (set === 'special_set') return 'Special hand';
  const [kind, tile] = Object.entries(set)[0];
  if (kind === 'chow') return `Chow ${tileName(tile)} up`;
  return `${kind[0].toUpperCase()}${kind.slice(1)} of ${tileName(tile)}`;
}

// ---- drawn

/** A move's element: a hint, or a button whose click does what the move says. */
function moveElement(screen, m) {
  if ('hint' in m) return h('span', { class: 'hint' }, m.hint);
  if ('chow' in m) return chowButton(screen, m.chow);
  const { does } = m;
  const onclick = 'discard' in does ? () => screen.discardSelected(does.discard)
    : 'ready' in does ? () => screen.send({ type: 'ready' })
      : () => does.act && screen.act(does.act);
  if ('key' in m) return keyButton(m.label, m.key, onclick, m.attrs);
  const { class: cls, ...rest } = m.attrs;
  return h('button', { class: cls, onclick, ...rest }, m.label);
}

/** A button for one chow, with its tiles drawn. */
function chowButton(screen, { action, low, label, isDefault }) {
  return h('button', { class: 'primary', onclick: () => screen.act(action), dataset: { action: action.action, ...(isDefault ? { default: '1' } : {}) } },
    low ? h('span', { class: 'chow-tiles' }, setTiles({ kind: 'chow', tile: low }).map((t) => tileElement(t, { small: true }))) : null,
    ` ${label}`);
}

/** The claim panel: the discard, the question, the timer and the claims. */
function claimPanel(screen, offer) {
  const c = offer.claimable;
  const d = offer.deadline;
  const total = (d?.ms_left ?? 0) + (performance.now() - screen.promptAt);
  return h('div', { class: 'claim-panel', role: 'dialog', 'aria-label': 'Claim the discard?', id: 'claim-panel' },
    h('div', { class: 'what' }, c ? tileElement(c.tile) : null, h('span', {}, offer.question)),
    d ? h('div', { class: 'timer' }, h('progress', { id: 'claim-timer', max: Math.max(1, d.ms_left), value: d.ms_left, 'aria-label': 'Time left to claim' }, ''), h('span', { id: 'claim-seconds' }, `${Math.ceil(total / 1000)} s`)) : null,
    h('div', { class: 'row' }, offer.buttons.map((b) => moveElement(screen, b))));
}

/**
 * Draws the moves on offer into the screen's dock (its actionsBox and
 * claimBox), and starts the claim timer's display when a panel is shown.
 * @param {import('./table.js').TableScreen} screen
 */
export function renderActions(screen) {
  const { moves, claim } = movesOffered({ prompt: screen.prompt, state: screen.state, selectedTile: screen.selectedTile(), replay: screen.replay });
  const panel = claim ? claimPanel(screen, claim) : null;
  fill(screen.actionsBox, moves.map((m) => moveElement(screen, m)));
  fill(screen.claimBox, panel);
  if (panel) screen.tick();
}
