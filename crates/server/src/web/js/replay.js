// Replays of stored games: the list of games, and a hand's events stepped
// forward and back with the table drawn as it was, up to its scoring. A
// finished game shows every hand (the server gives every event once a game is
// over); a live one only what a spectator saw.

import { api } from './api.js';
import { h, fill } from './dom.js';
import { applyEvent } from './state.js';
import { TableScreen } from './table.js';

/** An event's type in words, for a step with no sentence of its own ("hand_scored" → "hand scored"). */
function humanType(type) {
  const words = type.replace(/_/g, ' ');
  return `${words[0].toUpperCase()}${words.slice(1)}.`;
}

/** The stored games, newest first, each with its hands to replay. */
export async function showGames(view) {
  const state = new URLSearchParams(location.hash.split('?')[1] ?? '').get('state') ?? 'over';
  const page = await api('GET', `/games?limit=50${state === 'all' ? '' : `&state=${state}`}`);
  const filter = h('select', { id: 'games-state', 'aria-label': 'Which games' },
    [['over', 'Finished games'], ['playing', 'Games being played'], ['all', 'All games']].map(([v, t]) => h('option', { value: v, selected: v === state }, t)));
  filter.addEventListener('change', () => { location.hash = `#/games?state=${filter.value}`; });
  fill(view, h('section', { class: 'card' },
    h('div', { class: 'row' }, h('h1', {}, 'Replays'), filter),
    page.games.length ? h('table', { class: 'data', id: 'games' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Game'), h('th', {}, 'Players and scores'), h('th', {}, 'Finished'), h('th', {}, 'Hands'))),
      h('tbody', {}, page.games.map((g) => h('tr', { dataset: { game: g.id } },
        h('td', {}, h('strong', {}, g.name), h('div', { class: 'muted' }, g.preset)),
        h('td', {}, g.players.map((p) => `${p.name} ${g.scores[p.seat]}`).join(' · ')),
        h('td', {}, g.finished ? new Date(g.finished).toLocaleString() : g.state),
        h('td', {}, g.hands ? h('a', { href: `#/replay/${g.id}/1`, class: 'button' }, `Replay (${g.hands} hand${g.hands > 1 ? 's' : ''})`) : 'none'))))) : h('p', { class: 'muted' }, 'No games here yet.')));
  return null;
}

/** The state a replay starts from: the table as it was before hand `n`. */
function startingState(game, hands, n) {
  const before = hands.find((x) => x.hand === n - 1);
  const scores = before ? before.players.map((p) => p.total) : [0, 0, 0, 0];
  return {
    seat: null,
    omniscient: true,
    seq: 0,
    stale: false,
    chat: [],
    table: {
      id: game.id, name: game.name, state: 'playing', manager: null, spectators: 0, preset: game.preset,
      seats: [0, 1, 2, 3].map((s) => {
        const p = game.players.find((x) => x.seat === s);
        return { seat: s, name: p?.name ?? null, ...(p?.robot ? { robot: {} } : {}), connected: true, ready: true };
      }),
      scores: [...scores], hands: n - 1, pause_deciseconds: 0, waiting_for_ready: [], paused: false, seq: 0,
    },
    game: { viewer: null, options: {}, scores: [...scores], round: 'East', hands_started: n - 1, game_over: false, hand: null },
  };
}

/** Replays hand `n` of game `id`. */
export async function showReplay(view, id, n) {
  const [game, handPage, history] = await Promise.all([
    api('GET', `/games/${id}`),
    api('GET', `/games/${id}/hands?limit=100`),
    api('GET', `/games/${id}/hands/${n}/events`),
  ]);
  // Every audience's copy is kept for a finished game: show each tile once,
  // from the copy that carries it.
  const events = history.events.filter((e) => !(history.seen_as === 'everything' && typeof e.audience === 'object' && 'all_but' in e.audience));
  const start = startingState(game, handPage.hands, n);
  const states = [structuredClone(start)];
  let s = structuredClone(start);
  for (const e of events) {
    s = applyEvent(s, { type: 'event', seq: e.seq, at_us: e.at_us, event: e.event });
    states.push(structuredClone(s));
  }

  const stage = h('div', { id: 'replay-stage' });
  const screen = new TableScreen(stage, id, { replay: true, replayHand: n });
  // Each step's line: what the step label says, and the log's lines up to it
  // (the deal's draws only as step labels; the log would be flooded).
  screen.state = states[0];
  const texts = events.map((e) => screen.describe(e.event) ?? humanType(e.event.type));
  const draws = new Map();
  const logged = events.map((e) => screen.logLine(draws, e.event));
  let step = 0;
  let timer = null;
  const slider = h('input', { type: 'range', min: 0, max: events.length, value: 0, id: 'replay-slider', 'aria-label': 'Step' });
  const where = h('span', { id: 'replay-step', role: 'status' });
  const show = (k) => {
    step = Math.max(0, Math.min(events.length, k));
    slider.value = step;
    screen.showState(structuredClone(states[step]), step ? events[step - 1] : null, logged.slice(0, step).filter(Boolean));
    where.textContent = step ? `Step ${step} of ${events.length}: ${texts[step - 1]}` : `Step 0 of ${events.length}: before the deal`;
  };
  slider.addEventListener('input', () => show(Number(slider.value)));
  const playButton = h('button', { id: 'replay-play', onclick: () => {
    if (timer) { clearInterval(timer); timer = null; playButton.textContent = 'Play'; return; }
    playButton.textContent = 'Pause';
    timer = setInterval(() => { if (step >= events.length) { clearInterval(timer); timer = null; playButton.textContent = 'Play'; } else show(step + 1); }, 350);
  } }, 'Play');
  const hands = handPage.hands.map((x) => x.hand);
  const handSelect = h('select', { id: 'replay-hand', 'aria-label': 'Hand' }, (hands.includes(n) ? hands : [...hands, n]).map((k) => h('option', { value: k, selected: k === n }, `Hand ${k}`)));
  handSelect.addEventListener('change', () => { location.hash = `#/replay/${id}/${handSelect.value}`; });
  fill(view,
    h('div', { class: 'row' }, h('h1', {}, `Replay: ${game.name}`), handSelect, h('a', { href: '#/games' }, 'All games')),
    h('div', { class: 'replay-controls', role: 'toolbar', 'aria-label': 'Replay controls' },
      h('button', { id: 'replay-first', onclick: () => show(0), 'aria-label': 'To the start' }, '|◀'),
      h('button', { id: 'replay-back', onclick: () => show(step - 1), 'aria-label': 'Step back' }, '◀ Back'),
      playButton,
      h('button', { id: 'replay-forward', onclick: () => show(step + 1), 'aria-label': 'Step forward' }, 'Forward ▶'),
      h('button', { id: 'replay-last', onclick: () => show(events.length), 'aria-label': 'To the end' }, '▶|'),
      h('button', { id: 'replay-scoring', onclick: () => { show(events.length); screen.openScores(true); } }, 'Jump to the scoring'),
      slider, where),
    stage);
  show(0);
  const keys = (e) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== 'range') return;
    if (e.key === 'ArrowRight') { show(step + 1); e.preventDefault(); }
    if (e.key === 'ArrowLeft') { show(step - 1); e.preventDefault(); }
  };
  document.addEventListener('keydown', keys);
  return { dispose() { clearInterval(timer); document.removeEventListener('keydown', keys); screen.dispose(); } };
}
