// Before the game and between hands, the card beside the table: a
// newcomer's form to sit down (from the lobby or an invitation), the seats
// with their robots, the manager's Start, leaving the seat, the manager's
// game options (sent one by one as they change), and the way back to the
// lobby once the game is over. Who may do what is setupOffered's, plain
// data that node tests read; renderSetup draws it, and only when it changed
// (most events change none of it, and a redraw would lose the options'
// focus).

import { guestName } from './api.js';
import { session } from './session.js';
import { h, fill, toast } from './dom.js';
import { sit, nameField } from './lobby.js';
import { optionCatalogue, optionControl, COMMON_OPTIONS } from './options.js';
import * as tableApi from './table_api.js';

/**
 * What the setup card offers the viewer of `state`.
 * @param {object} state the table state
 * @param {boolean|undefined} invitedHere opened from an invitation, and not seated yet
 * @returns {{key: string, join: {heading: string}|null, seats: object[]|null, start: {full: boolean}|null,
 *   leave: boolean, options: boolean, over: boolean}}
 *   `key` changes whenever anything drawn does; each seat says whether we may
 *   sit there, add a robot to it, or take its robot away
 */
export function setupOffered(state, invitedHere) {
  const { table } = state;
  const me = state.seat;
  const manager = me != null && (table.manager === me || table.manager == null);
  const betweenHands = table.state === 'open' || (table.state === 'playing' && table.waiting_for_ready.length && !table.paused);
  const open = table.state === 'open';
  return {
    key: JSON.stringify([table.state, table.seats, table.manager, me, betweenHands, invitedHere, state.options]),
    join: open && me == null && table.seats.some((s) => s.name == null) ? { heading: invitedHere ? 'You are invited to play' : 'Join this game' } : null,
    seats: open ? table.seats.map((s) => ({
      seat: s.seat,
      name: s.name,
      robot: !!s.robot,
      sit: s.name == null && me == null,
      // Anyone may fill an empty table with robots; once people sit, only the manager.
      addRobot: s.name == null && (manager || table.seats.every((x) => x.robot || x.name == null)),
      removeRobot: !!s.robot && manager,
    })) : null,
    start: open && manager ? { full: table.seats.every((s) => s.name != null) } : null,
    leave: open && me != null,
    options: me != null && table.manager === me && !!betweenHands,
    over: table.state === 'over',
  };
}

/**
 * What an invitation opened at `state` does: nothing for a seated player,
 * 'watch' at a table without a free seat, 'sit' otherwise.
 * @param {object} state the table state
 * @returns {'seated'|'watch'|'sit'}
 */
export function invitationOutcome(state) {
  if (state.seat != null) return 'seated';
  const { table } = state;
  return table.state === 'open' && table.seats.some((s) => s.name == null) ? 'sit' : 'watch';
}

/**
 * Draws the setup card into the screen's setupBox when what it offers changed.
 * @param {import('./table.js').TableScreen} screen
 */
export function renderSetup(screen) {
  const offer = setupOffered(screen.state, screen.invitedHere);
  if (offer.key === screen.setupKey) return;
  screen.setupKey = offer.key;
  const parts = [];
  if (offer.join) {
    // A newcomer (from an invitation or the lobby's list) sits down here.
    const typed = screen.view.querySelector('#guest-name')?.value;
    const name = session.me ? null : nameField(typed ?? guestName());
    parts.push(h('form', { class: 'join', id: 'join-form', onsubmit: (e) => { e.preventDefault(); sitHere(screen, null); } },
      h('h2', {}, offer.join.heading),
      name ? h('p', { class: 'row' }, h('label', { for: 'guest-name' }, 'Your name'), name) : h('p', {}, `You play as ${session.me.name}.`),
      h('p', {}, h('button', { type: 'submit', class: 'primary', id: 'take-seat' }, 'Take a free seat'))));
  }
  if (offer.seats) {
    parts.push(h('h2', {}, 'Seats'));
    parts.push(h('ul', { style: 'list-style:none;padding:0;margin:0' }, offer.seats.map((s) => h('li', { class: 'row', style: 'margin:4px 0' },
      h('span', {}, `Seat ${s.seat + 1}: `, h('strong', {}, s.name ?? 'free'), s.robot ? h('span', { class: 'robot-tag' }, 'robot') : ''),
      s.sit ? h('button', { onclick: () => sitHere(screen, s.seat) }, 'Sit here') : null,
      s.addRobot ? h('button', { onclick: () => addRobot(screen, s.seat), dataset: { robotSeat: s.seat } }, 'Add a robot') : null,
      s.removeRobot ? h('button', { onclick: () => removeRobot(screen, s.seat) }, 'Remove') : null))));
    if (offer.start) {
      const { full } = offer.start;
      parts.push(h('p', {}, h('button', { class: 'primary', id: 'start', disabled: !full, onclick: () => start(screen) }, full ? 'Start the game' : 'Start (needs four players)')));
    }
    if (offer.leave) parts.push(h('p', {}, h('button', { onclick: () => leave(screen) }, 'Leave the seat')));
  }
  if (offer.options) parts.push(optionsForm(screen));
  if (offer.over) parts.push(h('p', { class: 'row' }, h('a', { class: 'button', href: '#/' }, 'Back to the lobby'), h('a', { class: 'button', href: `#/replay/${screen.id}/1` }, 'Replay this game')));
  fill(screen.setupBox, parts.length ? h('div', { class: 'card' }, parts) : null);
}

/**
 * The manager's options, from the server's catalogue: the common ones
 * first, the rest under "All options"; each change is sent at once, and
 * what the table answers (option_changed, or a refusal) shows.
 */
function optionsForm(screen) {
  const common = h('div', { class: 'options-list' }, h('p', { class: 'loading' }, 'Loading the options…'));
  const rest = h('div', { class: 'options-list' });
  const form = h('form', { class: 'manager-panel', id: 'options-form', onsubmit: (e) => e.preventDefault() },
    h('h2', {}, 'Game options (you manage this game)'),
    common,
    h('details', {}, h('summary', {}, 'All options'), rest),
    h('p', { class: 'muted' }, 'Changes apply from the next hand; everyone is told. Time to claim is followed by the extra time for slow connections.'));
  optionCatalogue().then((entries) => {
    // The values as they are once the catalogue came, not when the form was drawn.
    const values = screen.state.options ?? {};
    const control = (entry) => optionControl(entry, values[entry.name], (value) => screen.send({ type: 'set_option', name: entry.name, value }));
    fill(common, COMMON_OPTIONS.map((name) => entries.find((e) => e.name === name)).filter(Boolean).map(control));
    fill(rest, entries.filter((e) => !COMMON_OPTIONS.includes(e.name)).map(control));
  }).catch((err) => fill(common, h('p', { class: 'error-text' }, `The options could not be loaded: ${err.message}`)));
  return form;
}

/**
 * Sits at `seat` (null: any free one), then loads the page again: the
 * screen connects afresh as the seat's player.
 * @param {import('./table.js').TableScreen} screen
 * @param {number|null} seat
 */
async function sitHere(screen, seat) {
  try {
    await sit(screen.id, seat);
    screen.dispose();
    location.reload();
  } catch (err) { toast(err.message); }
}

async function addRobot(screen, seat) {
  try { await tableApi.addRobot(screen.id, seat, screen.token()); } catch (err) { toast(err.message); }
}

async function removeRobot(screen, seat) {
  try { await tableApi.removeRobot(screen.id, seat, screen.token()); } catch (err) { toast(err.message); }
}

async function start(screen) {
  try { await tableApi.startGame(screen.id, screen.token()); } catch (err) { toast(err.message); }
}

async function leave(screen) {
  try {
    await tableApi.leaveSeat(screen.id, screen.token());
    location.hash = '#/';
  } catch (err) { toast(err.message); }
}

/**
 * Opened from an invitation: a newcomer without a seat here sits at a free
 * seat at once when we know its name (or it is logged in); otherwise the
 * setup card asks for the name. A full or started table is watched.
 * @param {import('./table.js').TableScreen} screen
 */
export async function acceptInvitation(screen) {
  screen.invited = false;
  history.replaceState(null, '', `#/table/${encodeURIComponent(screen.id)}`);
  const outcome = invitationOutcome(screen.state);
  if (outcome === 'seated') return;
  if (outcome === 'watch') {
    toast('This table has no free seat: you are watching.');
    return;
  }
  screen.invitedHere = true;
  screen.setupKey = null;
  screen.schedule();
  if (session.me || guestName()) await sitHere(screen, null);
}
