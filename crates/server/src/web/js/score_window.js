// The scoring window over the table: it opens by itself once per finished
// hand (a replay opens it only when asked), shows scoring.js's breakdown,
// and offers "Ready for the next hand" while the table waits for us. It is
// redrawn only when something in it changed, so the keyboard focus stays
// put. When it is due and what its title says are plain data (scoresDue,
// scoresKey, scoresTitle) that node tests read.

import { h, fill, keyButton } from './dom.js';
import { scoringBody } from './scoring.js';

/**
 * Whether the window is due for the state's hand: null while no hand is
 * finished (and always in a replay); `fresh` the first time for a hand
 * (`shownFor` is the hand it last opened for), when it opens by itself.
 * @param {object} state the table state
 * @param {string|null} shownFor
 * @param {boolean} replay
 * @returns {{key: string, fresh: boolean}|null}
 */
export function scoresDue(state, shownFor, replay) {
  if (replay) return null;
  const hand = state.game?.hand;
  if (!hand || hand.phase !== 'finished') return null;
  const key = `${hand.number}`;
  return { key, fresh: shownFor !== key };
}

/**
 * What the window shows, as a key that changes whenever it must be redrawn.
 * @param {object} state the table state
 * @param {object|null} prompt the seat's latest prompt
 * @returns {string}
 */
export function scoresKey(state, prompt) {
  const hand = state.game?.hand;
  return JSON.stringify([hand?.number, hand?.seats.map((s) => s.score?.score), hand?.outcome, prompt?.ready, state.game?.game_over]);
}

/**
 * The window's title.
 * @param {object} state the table state
 * @returns {string}
 */
export function scoresTitle(state) {
  return state.game?.game_over ? 'Game over' : `Scores of hand ${state.game?.hand?.number ?? ''}`;
}

/**
 * Opens the window once a hand is over, or keeps it current while open.
 * @param {import('./table.js').TableScreen} screen
 */
export function showScoresWhenDue(screen) {
  const due = scoresDue(screen.state, screen.scoreShownFor, screen.replay);
  if (!due) return;
  if (!due.fresh) {
    if (screen.scoreDialog?.open) fillScores(screen, false);
    return;
  }
  screen.scoreShownFor = due.key;
  openScores(screen, false);
}

/**
 * Opens the window (made the first time, kept on the screen as
 * screen.scoreDialog); `focus` puts the keyboard on its first button.
 * @param {import('./table.js').TableScreen} screen
 * @param {boolean} focus
 */
export function openScores(screen, focus) {
  if (!screen.scoreDialog) {
    screen.scoreBody = h('div', { class: 'dialog-body' });
    screen.scoreFoot = h('div', { class: 'dialog-foot' });
    screen.scoreDialog = h('dialog', { id: 'score-dialog', 'aria-labelledby': 'score-title' },
      h('div', { class: 'dialog-body', style: 'padding-bottom:0' }, h('h2', { id: 'score-title' }, 'Scores')), screen.scoreBody, screen.scoreFoot);
    document.body.append(screen.scoreDialog);
  }
  fillScores(screen);
  if (!screen.scoreDialog.open) screen.scoreDialog.showModal();
  if (focus) screen.scoreDialog.querySelector('button')?.focus();
}

/** Draws the window's content: always, or (`always` false) only when it changed. */
function fillScores(screen, always = true) {
  const key = scoresKey(screen.state, screen.prompt);
  if (!always && key === screen.scoreKey) return;
  screen.scoreKey = key;
  fill(screen.scoreBody, scoringBody(screen.state));
  const title = screen.scoreDialog.querySelector('#score-title');
  title.textContent = scoresTitle(screen.state);
  const ready = screen.prompt?.ready && screen.state.seat != null;
  fill(screen.scoreFoot,
    ready ? keyButton('Ready for the next hand', 'r', () => { screen.send({ type: 'ready' }); screen.scoreDialog.close(); }, { class: 'primary', id: 'score-ready' }) : null,
    h('button', { id: 'score-close', onclick: () => screen.scoreDialog.close() }, 'Close'));
}
