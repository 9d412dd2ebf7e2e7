// The lobby: play at once against three robots, open a table with chosen
// rules and robots, see every table as it changes (seats, state, spectators),
// sit, watch, and come back to one's unfinished games.

import { presetTitle } from './options.js';
import { api, guestSeats, rememberSeat, guestName, rememberGuestName } from './api.js';
import { h, fill, toast } from './dom.js';
import { session, openAuthDialog } from './session.js';

const REFRESH_MS = 2000;
const STRATEGY = [
  ['chowness', -1, 1, 'Likes chows'],
  ['hiddenness', 0, 1, 'Keeps sets concealed'],
  ['majorness', 0, 1, 'Likes honours and terminals'],
  ['suitness', 0, 1, 'Likes one-suit hands'],
];

/** Sits at table `id` as the account or as a guest; answers the seat and remembers a guest's token. */
export async function sit(id, seat) {
  const body = session.me ? {} : { name: requireGuestName() };
  if (seat != null) body.seat = seat;
  const grant = await api('POST', `/tables/${id}/seats`, body);
  // An account's seat is played with its session; a guest's with the token.
  rememberSeat(id, { seat: grant.seat, token: session.me ? null : grant.token, name: session.me?.name ?? body.name });
  return grant;
}

/** The most characters a name at a table may have (the server's limit). */
const NAME_MAX = 32;

/**
 * The guest's name field (`#guest-name`), which says so when the name
 * reaches the limit instead of silently stopping.
 */
export function nameField(value) {
  const note = h('span', { class: 'muted', 'aria-live': 'polite' });
  const input = h('input', { id: 'guest-name', value, maxlength: NAME_MAX, autocomplete: 'nickname', placeholder: 'e.g. Ann', 'aria-describedby': 'guest-name-note' });
  note.id = 'guest-name-note';
  const tell = () => { note.textContent = input.value.length >= NAME_MAX ? ` ${NAME_MAX} characters at most` : ''; };
  input.addEventListener('input', tell);
  tell();
  return h('span', {}, input, note);
}

function requireGuestName() {
  const input = document.getElementById('guest-name');
  let name = (input?.value ?? guestName()).trim();
  if (!name && !input) name = (window.prompt('Your name at the table:', '') ?? '').trim();
  if (!name) {
    input?.focus();
    throw new Error('Enter your name first (or log in).');
  }
  rememberGuestName(name);
  return name;
}

/** The lobby screen in `view`; answers an object whose dispose() stops its refreshing. */
export function showLobby(view) {
  let timer = null;
  const tablesBox = h('div', { id: 'table-list', 'aria-live': 'off' }, h('p', { class: 'loading' }, 'Loading tables…'));
  const mineBox = h('div', { id: 'my-games' });

  const guestBox = h('div', { id: 'identity' });
  const renderIdentity = () => {
    if (session.me) {
      fill(guestBox, h('p', {}, 'You play as ', h('strong', {}, session.me.name), '.'));
    } else {
      fill(guestBox,
        h('p', {}, h('label', { for: 'guest-name' }, 'Your name'), ' ', nameField(guestName())),
        h('p', { class: 'muted' }, 'Play as a guest under this name, or ',
          h('button', { class: 'link', onclick: () => openAuthDialog('login') }, 'log in'), ' / ',
          h('button', { class: 'link', onclick: () => openAuthDialog('register') }, 'register'),
          ' to keep your games on every device.'));
    }
  };
  renderIdentity();
  session.listeners.add(renderIdentity);

  const quick = h('button', { class: 'primary big', id: 'quick-play', onclick: () => quickPlay(quick) }, 'Play against three robots');

  const presetSelect = h('select', { id: 'new-preset' });
  // A game is 1, 2 or a multiple of 4 rounds (NumRounds); the time to claim
  // is followed by the preset's extra time for slow connections (TimeoutGrace).
  const rounds = h('select', { id: 'new-rounds' }, [[1, '1 round (about 4 hands)'], [2, '2 rounds'], [4, '4 rounds (a full game)'], [8, '8 rounds']].map(([n, t]) => h('option', { value: n, selected: n === 4 }, t)));
  const timeout = h('select', { id: 'new-timeout' }, [[10, '10 s'], [15, '15 s'], [20, '20 s'], [30, '30 s'], [60, '60 s'], [0, 'no limit']].map(([v, t]) => h('option', { value: v, selected: v === 15 }, t)));
  const presetAbout = h('p', { class: 'muted', id: 'new-preset-about' });
  const robotRows = [1, 2, 3].map((seat) => {
    const check = h('input', { type: 'checkbox', id: `robot-${seat}`, checked: true });
    const sliders = STRATEGY.map(([key, min, max, label]) => {
      const input = h('input', { type: 'range', min, max, step: 0.25, value: 0, id: `robot-${seat}-${key}`, 'aria-label': `Robot in seat ${seat + 1}: ${label}` });
      const out = h('output', { for: input.id }, '0');
      input.addEventListener('input', () => { out.textContent = input.value; });
      return { key, input, row: [h('span', {}, label), input, out] };
    });
    return {
      seat, check, sliders,
      el: h('div', {},
        h('label', {}, check, `Robot in seat ${seat + 1}`),
        h('details', {}, h('summary', {}, 'Strategy'), h('div', { class: 'strategy' }, sliders.map((s) => s.row)))),
    };
  });
  const tableName = h('input', { id: 'new-name', maxlength: 64, placeholder: 'Mah-Jong table' });
  const openForm = h('form', { class: 'card', id: 'open-table' },
    h('h2', {}, 'Open a table'),
    h('p', { class: 'row' }, h('label', { for: 'new-name' }, 'Name'), tableName),
    h('p', { class: 'row' }, h('label', { for: 'new-preset' }, 'Rules'), presetSelect),
    presetAbout,
    h('p', { class: 'row' }, h('label', { for: 'new-rounds' }, 'Length'), rounds, h('label', { for: 'new-timeout' }, 'Time to claim'), timeout),
    h('fieldset', {}, h('legend', {}, 'Robots (you sit in seat 1)'), robotRows.map((r) => r.el)),
    h('button', { type: 'submit', class: 'primary' }, 'Open and sit'));
  openForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const robots = robotRows.filter((r) => r.check.checked).map((r) => ({
        seat: r.seat, strategy: Object.fromEntries(r.sliders.map((s) => [s.key, Number(s.input.value)])),
      }));
      const body = { robots, preset: presetSelect.value, options: { NumRounds: Number(rounds.value), Timeout: Number(timeout.value) } };
      if (tableName.value.trim()) body.name = tableName.value.trim();
      requireGuestNameIfGuest();
      const table = await api('POST', '/tables', body);
      await sit(table.id, 0);
      location.hash = `#/table/${table.id}`;
    } catch (err) {
      toast(err.message);
    }
  });

  fill(view,
    // In reading order for a phone (play, your games, the tables, a new
    // table); a desktop puts the tables in a column of their own.
    h('div', { class: 'lobby' },
      h('section', { class: 'card play', 'aria-labelledby': 'play-title' },
        h('h1', { id: 'play-title' }, 'Play Mah-Jong'),
        guestBox,
        h('p', {}, quick),
        h('p', { class: 'muted' }, 'Chinese Classical rules as mj-server plays them. You sit as East; the robots play the other three seats. ',
          h('a', { href: '#/help' }, 'How to play'))),
      mineBox,
      h('section', { class: 'tables card', 'aria-labelledby': 'tables-title' },
        h('div', { class: 'row' }, h('h2', { id: 'tables-title' }, 'Tables'), h('span', { class: 'muted' }, 'updated live')),
        tablesBox),
      openForm));

  api('GET', '/presets').then((list) => {
    fill(presetSelect, list.presets.map((p) => h('option', { value: p.name, title: p.description }, presetTitle(p.name))));
    const about = () => {
      const p = list.presets.find((x) => x.name === presetSelect.value);
      const grace = p?.options?.TimeoutGrace;
      const description = (p?.description ?? '').trim();
      const sentence = description && !/[.!?]$/.test(description) ? `${description}.` : description;
      presetAbout.textContent = `${sentence}${grace ? ` Time to claim is followed by ${grace} s extra for slow connections.` : ''}`;
    };
    presetSelect.addEventListener('change', about);
    about();
  }).catch((err) => toast(`Presets: ${err.message}`));

  const refresh = async () => {
    try {
      const { tables } = await api('GET', '/tables');
      renderTables(tablesBox, mineBox, tables);
    } catch (err) {
      fill(tablesBox, h('p', { class: 'error-text' }, `Cannot list the tables: ${err.message}`));
    }
    timer = setTimeout(refresh, REFRESH_MS);
  };
  refresh();

  return {
    dispose() {
      clearTimeout(timer);
      timer = null;
      session.listeners.delete(renderIdentity);
    },
  };
}

function requireGuestNameIfGuest() {
  if (!session.me) requireGuestName();
}

async function quickPlay(button) {
  button.disabled = true;
  try {
    requireGuestNameIfGuest();
    const me = session.me?.name ?? guestName();
    const table = await api('POST', '/tables', { name: `${me}'s table`, robots: [{ seat: 1 }, { seat: 2 }, { seat: 3, strategy: { chowness: 0.5 } }] });
    const grant = await sit(table.id, 0);
    await api('POST', `/tables/${table.id}/start`, undefined, { token: session.me ? null : grant.token });
    location.hash = `#/table/${table.id}`;
  } catch (err) {
    toast(err.message);
    button.disabled = false;
  }
}

/** Is one of the table's seats ours (by this browser's token, or by our account's name)? */
export function mySeatAt(table) {
  const mine = guestSeats()[table.id];
  if (mine && table.seats[mine.seat]?.name === mine.name) return mine.seat;
  if (session.me) {
    // An account's seat only: a guest may have sat under the same name.
    const s = table.seats.find((x) => x.account && x.name?.toLowerCase() === session.me.name.toLowerCase());
    if (s) return s.seat;
  }
  return null;
}

function renderTables(box, mineBox, tables) {
  const mine = tables.filter((t) => t.state !== 'over' && mySeatAt(t) != null);
  fill(mineBox, mine.length ? h('section', { class: 'card', 'aria-labelledby': 'mine-title' },
    h('h2', { id: 'mine-title' }, 'Your unfinished games'),
    mine.map((t) => h('p', { class: 'row' }, h('strong', {}, t.name), h('span', { class: `state ${t.state}` }, t.state),
      h('a', { class: 'button primary', href: `#/table/${t.id}` }, 'Return to your seat')))) : null);

  if (!tables.length) {
    fill(box, h('p', { class: 'muted' }, 'No tables yet: open one, or play against the robots.'));
    return;
  }
  // Newest activity first would reorder under the reader's eyes: keep the server's order.
  fill(box, h('ul', { class: 'plain', role: 'list', style: 'list-style:none;padding:0;margin:0' }, tables.map((t) => {
    const me = mySeatAt(t);
    const free = t.seats.filter((s) => s.name == null).length;
    const seats = t.seats.map((s) => h('span', {
      class: `seat-chip${s.name == null ? ' empty' : ''}${s.robot ? ' robot' : ''}`,
      title: s.name == null ? 'free seat' : s.robot ? 'robot' : s.connected ? 'connected' : 'not connected',
    }, s.name ?? `seat ${s.seat + 1} free`, s.name && !s.robot && !s.connected ? ' (away)' : ''));
    const actions = [];
    if (me != null) actions.push(h('a', { class: 'button primary', href: `#/table/${t.id}` }, 'Return'));
    else if (t.state === 'open' && free) {
      actions.push(h('button', {
        class: 'primary', 'data-table': t.id,
        onclick: async () => {
          try { await sit(t.id); location.hash = `#/table/${t.id}`; } catch (err) { toast(err.message); }
        },
      }, 'Sit'));
    }
    actions.push(h('a', { class: 'button', href: `#/table/${t.id}`, 'aria-label': `Watch ${t.name}` }, 'Watch'));
    return h('li', { class: 'card table-row', dataset: { table: t.id } },
      h('div', {},
        h('div', { class: 'row' }, h('strong', {}, t.name), h('span', { class: `state ${t.state}` }, t.state),
          h('span', { class: 'muted' }, t.preset),
          t.hands ? h('span', { class: 'muted' }, `hand ${t.hands}`) : null,
          h('span', { class: 'muted' }, `${t.spectators} watching`)),
        h('div', { class: 'seats' }, seats)),
      h('div', { class: 'row' }, actions));
  })));
}
