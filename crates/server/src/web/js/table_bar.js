// The strip above the table and what hangs from it: the table's name,
// state, hand, wall count and connection; its controls (Scores, Pause, Sort,
// Invite, Rules, the settings menu, "Play here" once another tab took the
// seat); the pause dialog; and the first-game hints under it. barShown says
// what is shown from plain data (node tests read it); the rest draws it.
// The controls are redrawn only when something in them changed: a redraw
// for every event would swallow a click that lands mid-redraw.

import { h, fill, toast } from './dom.js';
import { soundOn, setSound } from './sound.js';
import {
  VIEW_SETTINGS, HINTS_KEY, viewSetting, setViewSetting, onePool, setOnePool, everyDiscard, setEveryDiscard,
} from './table_settings.js';
import { invitationLink } from './table_api.js';

/**
 * What the bar shows for the viewer of `state`: its words, and which controls.
 * @param {object} on
 * @param {object} on.state the table state
 * @param {string} on.status the connection's status ('connecting', 'connected', 'closed'...)
 * @param {string} [on.closedText] what to say once closed (narration.js's closedText)
 * @param {boolean} on.replay a replay's screen
 * @param {number|null} on.replayHand the hand a replay shows
 * @returns {object} `badge` [class, text]; `round`, `wall`, `conn` words or null;
 *   `watching`, `paused` flags; `scores`, `pause`, `sort`, `invite`, `playHere`
 *   the controls offered (truthy)
 */
export function barShown({ state, status, closedText, replay, replayHand }) {
  const { table, game } = state;
  const hand = game?.hand;
  const me = state.seat;
  return {
    name: table.name,
    badge: replay ? ['over', 'replay'] : [table.state, table.state],
    round: game && (game.hands_started || replayHand) ? `${game.round} round · hand ${hand?.number ?? replayHand ?? game.hands_started}` : null,
    wall: hand ? `${hand.live_tiles_left} ${hand.live_tiles_left === 1 ? 'tile' : 'tiles'} in the wall` : null,
    watching: me == null && !replay,
    paused: !!table.paused,
    conn: replay ? null : status === 'connected' ? 'connected' : status === 'closed' ? closedText : `${status}…`,
    // Whenever the scoring window has something to show: a washed-out
    // hand has no scores, but its window (the hands laid out) opens too.
    scores: !!hand && (hand.phase === 'finished' || hand.seats.some((s) => s.score)),
    pause: me != null && table.state === 'playing' && hand && hand.phase !== 'finished' && !table.waiting_for_ready.length,
    sort: me != null,
    invite: !replay && table.state !== 'over',
    playHere: status === 'closed' && me != null,
  };
}

/**
 * Draws the bar: its words every time, its controls when they changed.
 * @param {import('./table.js').TableScreen} screen
 */
export function renderBar(screen) {
  const { table } = screen.state;
  const me = screen.state.seat;
  const shown = barShown({ state: screen.state, status: screen.status, closedText: screen.closedText, replay: screen.replay, replayHand: screen.replayHand });
  const items = [
    h('h1', { style: 'font-size:1.15rem;margin:0' }, shown.name),
    h('span', { class: `state ${shown.badge[0]}` }, shown.badge[1]),
    shown.round ? h('span', { class: 'status' }, shown.round) : null,
    shown.wall ? h('span', { class: 'status', id: 'wall-count' }, shown.wall) : null,
    shown.watching ? h('span', { class: 'status watching' }, 'Watching') : null,
    shown.paused ? h('span', { class: 'status error-text' }, 'Paused') : null,
    screen.replay ? null : h('span', { class: `status conn${screen.status === 'connected' ? '' : ' bad'}`, role: 'status', id: 'conn-status' }, shown.conn),
    h('span', { style: 'flex:1' }),
  ];
  const key = JSON.stringify([shown.scores, shown.pause, me, table.state, screen.status, screen.settingsOpen, everyDiscard(), soundOn(), onePool(),
    Object.keys(VIEW_SETTINGS).map(viewSetting)]);
  fill(screen.barStatus, items);
  if (key !== screen.barKey) {
    screen.barKey = key;
    fill(screen.barControls, [
      shown.scores ? h('button', { id: 'show-scores', onclick: () => screen.openScores(true) }, 'Scores') : null,
      shown.pause ? h('button', { id: 'pause', onclick: () => requestPause(screen) }, 'Pause') : null,
      shown.sort ? h('button', { id: 'sort', onclick: () => { screen.autoSort = true; screen.schedule(); }, title: 'Sort your tiles in xmj\'s order' }, 'Sort') : null,
      shown.invite ? h('button', { id: 'invite', onclick: () => copyInvitation(screen), title: 'Copy a link that seats a friend here (or lets them watch)' }, 'Invite') : null,
      h('a', { class: 'button', href: '#/help', target: '_blank', rel: 'noopener', title: 'The rules and the keys, in a new tab' }, 'Rules'),
      settingsMenu(screen),
      shown.playHere ? h('button', { class: 'primary', onclick: () => location.reload() }, 'Play here') : null,
    ]);
  }
}

/**
 * The settings menu of the bar: being asked about every discard (the
 * seat's, told to the server), sound, and how the table is drawn (this
 * browser's). Kept open across redraws while the player uses it.
 */
function settingsMenu(screen) {
  const check = (id, on, label, title, change) => h('label', { title },
    h('input', { type: 'checkbox', id, checked: on, onchange: (e) => { change(e.target.checked); screen.schedule(); } }), label);
  const me = screen.state.seat;
  const menu = h('details', { class: 'settings-menu', id: 'settings', open: !!screen.settingsOpen, ontoggle: (e) => { screen.settingsOpen = e.target.open; } },
    h('summary', {}, 'Settings'),
    h('div', { class: 'menu' },
      me != null ? check('every-discard', everyDiscard(), 'Ask me about every discard',
        'Off: the table passes for you at once when you cannot claim a discard. On: you answer every discard yourself, as in xmj.',
        () => toggleEveryDiscard(screen)) : null,
      check('sound', soundOn(), 'Sound', 'Sounds for your turn, claims and the claim deadline', (on) => setSound(on)),
      check('one-pool', onePool(), 'All discards in one pool', 'xmj draws the discards in one pool; otherwise each player\'s are in front of them', (on) => setOnePool(on)),
      Object.entries(VIEW_SETTINGS).map(([name, [, , label, title]]) => check(`view-${name}`, viewSetting(name), label, title, (on) => setViewSetting(name, on)))));
  return menu;
}

/**
 * The message that tells the table whether this seat is asked about every
 * discard or only when it may claim one (the table keeps the wish for the seat).
 * @param {boolean} on
 * @returns {{type: 'set_claim_prompts', every_discard: boolean}}
 */
export function claimPromptsMessage(on) {
  return { type: 'set_claim_prompts', every_discard: on };
}

/** Switches between being asked about every discard and only when a claim is possible. */
function toggleEveryDiscard(screen) {
  const on = !everyDiscard();
  setEveryDiscard(on);
  screen.send(claimPromptsMessage(on));
  toast(on ? 'You will be asked about every discard.' : 'You will be asked only when you can claim a discard.');
  screen.schedule();
}

/** Copies the invitation link, or shows it to be copied by hand. */
async function copyInvitation(screen) {
  const link = invitationLink(location, screen.id);
  try {
    await navigator.clipboard.writeText(link);
    toast('Link copied: send it to a friend. It seats them at a free seat, or lets them watch.');
  } catch {
    // No clipboard (an insecure page, or refused): show it to copy by hand.
    toast(`Send this link to a friend: ${link}`, 12000);
  }
}

/**
 * The request to pause, with the reason typed (trimmed, 500 characters at most).
 * @param {string} typed
 * @returns {{type: 'request_pause', reason: string}}
 */
export function pauseRequest(typed) {
  return { type: 'request_pause', reason: typed.trim().slice(0, 500) };
}

/** Asks for the reason in a small dialog of its own, then asks the table to pause. */
function requestPause(screen) {
  const reason = h('input', { id: 'pause-reason', maxlength: 500, placeholder: 'e.g. back in five minutes', autocomplete: 'off' });
  const dialog = h('dialog', { id: 'pause-dialog', 'aria-labelledby': 'pause-title' });
  const form = h('form', { method: 'dialog' },
    h('div', { class: 'dialog-body' },
      h('h2', { id: 'pause-title' }, 'Pause the game'),
      h('p', {}, 'Play stops until everyone says they are ready again.'),
      h('p', {}, h('label', { for: 'pause-reason' }, 'Reason (optional)'), ' ', reason)),
    h('div', { class: 'dialog-foot' },
      h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'),
      h('button', { type: 'submit', class: 'primary', id: 'pause-submit' }, 'Pause')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    screen.send(pauseRequest(reason.value));
    dialog.close();
  });
  dialog.append(form);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  reason.focus();
}

/**
 * The first-game hints: for a player who has not dismissed them, once.
 * Touched only when they are shown or hidden.
 * @param {import('./table.js').TableScreen} screen
 */
export function renderHints(screen) {
  const show = screen.state.seat != null && !screen.replay && localStorage.getItem(HINTS_KEY) !== '1';
  if (show === !screen.hints.hidden) return;
  screen.hints.hidden = !show;
  if (!show) return;
  fill(screen.hints,
    h('ul', {},
      h('li', {}, 'Your turn: select a tile (click, or ←/→) and press Discard, or double-click it.'),
      h('li', {}, 'When a discard can make a set for you, the panel below the table asks: claim it or not, before the timer runs out. Otherwise the table passes for you.'),
      h('li', {}, 'Four sets and a pair go out: the Mah Jong! button appears by itself.')),
    h('span', { class: 'row' },
      h('a', { class: 'button', href: '#/help', target: '_blank', rel: 'noopener' }, 'Rules'),
      h('button', { id: 'hints-done', onclick: () => { localStorage.setItem(HINTS_KEY, '1'); screen.schedule(); } }, 'Got it')));
}
