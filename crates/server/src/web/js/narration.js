// The table screen's words for what happens: the game log's lines, what a
// screen reader is told, the big "Pung!" shouted over the felt, and what the
// screen says when its socket is gone for good. The sentences themselves are
// log_text.js's; this module decides which events get one, as which viewer,
// and keeps the log to its length. Everything but logContent (which draws
// the log box) is plain data in, strings out, so node tests read it.

import { h } from './dom.js';
import { describeEvent, dealtTile } from './log_text.js';
import { nameOf } from './scoring.js';
import { chatEntry, claimWord } from './state.js';

/** Lines the game log keeps (the oldest go first); the box shows them all. */
export const LOG_LINES = 400;

/** Events that have a log line but are not read out: they come too often to be worth a screen reader's breath. */
const UNANNOUNCED = ['drew', 'waiting_for_ready', 'finished_declaring'];

/** The claims a replay still shouts when stepped onto (a set made is shown by the felt itself). */
export const REPLAY_SHOUTS = ['claimed', 'mah_jong', 'robbed_kong'];

/**
 * Player `p` as the viewer of `state` reads the name: "You" for the
 * viewer's own seat, otherwise the name at the table.
 * @param {object|null} state the table state (state.js)
 * @param {number} p a seat
 * @returns {string}
 */
export function whoIs(state, p) {
  return p === state?.seat ? 'You' : nameOf(state.table, p);
}

/**
 * The sentence for event `e` (see log_text.js), as the viewer of `state`
 * reads it; `everything` for a replay, which tells every draw and pass.
 * @param {object|null} state the table state
 * @param {object} e an event
 * @param {{everything?: boolean}} [how]
 * @returns {string|null}
 */
export function eventSentence(state, e, { everything = false } = {}) {
  return describeEvent(e, { viewer: state?.seat ?? null, everything, name: (p) => nameOf(state.table, p) });
}

/**
 * The log's line for event `e`, or null: none for the deal's draws, counted
 * per hand in `draws` (see log_text.js's dealtTile), which this updates.
 * @param {Map<number, number>} draws the hand's draws per player
 * @param {object} e an event
 * @param {(e: object) => string|null} sentence how an event reads (eventSentence, for the viewer)
 * @returns {string|null}
 */
export function logLine(draws, e, sentence) {
  return dealtTile(draws, e) ? null : sentence(e);
}

/**
 * Whether an event's log line is also said to screen readers.
 * @param {object} e an event
 * @returns {boolean}
 */
export function announced(e) {
  return !UNANNOUNCED.includes(e.type);
}

/**
 * What is shouted over the felt for event `e` (a claim, a set made, a
 * Mah-Jong), or null; `name` gives a player as the viewer reads it.
 * @param {object} e an event
 * @param {(p: number) => string} name
 * @returns {string|null}
 */
export function shoutFor(e, name) {
  switch (e.type) {
    case 'claimed': return `${name(e.player)}: ${claimWord(e.claim)}`;
    case 'mah_jong':
    case 'robbed_kong': return `${name(e.player)}: Mah Jong!`;
    case 'chowed': case 'punged': case 'konged':
      return `${name(e.player)}: ${e.type === 'chowed' ? 'Chow' : e.type === 'punged' ? 'Pung' : 'Kong'}!`;
    default: return null;
  }
}

/**
 * Adds a line to `log`, dropping the oldest beyond LOG_LINES.
 * @param {string[]} log changed in place
 * @param {string} text
 * @returns {string[]} the same log
 */
export function appendLog(log, text) {
  log.push(text);
  if (log.length > LOG_LINES) log.splice(0, log.length - LOG_LINES);
  return log;
}

/**
 * The log lines and chat entries of one hand's stored events (as
 * `GET /games/ID/hands/N/events` gives them), those up to `upTo` only: the
 * stream brings the rest.
 * @param {{seq: number, at_us: number, event: object}[]} events
 * @param {number} upTo the last seq the snapshot covers
 * @param {(e: object) => string|null} line the log's line for an event (logLine, with its draws)
 * @returns {{lines: string[], chat: object[]}}
 */
export function historyLines(events, upTo, line) {
  const lines = [];
  const chat = [];
  for (const ev of events) {
    if (ev.seq > upTo) continue;
    const e = ev.event;
    if (e.type === 'chat') chat.push(chatEntry(e, ev.at_us));
    const text = line(e);
    if (text) lines.push(text);
  }
  return { lines, chat };
}

/**
 * What the screen says when the socket closed for good, by its close code
 * (docs/protocol.md, "Close codes").
 * @param {number} code
 * @param {string} [reason]
 * @returns {string}
 */
export function closedText(code, reason) {
  return code === 4001 ? 'Your session has ended: log in again to play.'
    : code === 4003 ? 'You left this seat.'
      : code === 1000 ? `The table has closed${reason ? `: ${reason}` : ''}.`
        : 'This seat is now being played in another window or tab.';
}

/**
 * What the log box shows, as a key that changes whenever it must be
 * redrawn. A counter of lines written, not the log's length: once the log
 * is full its length stays put.
 * @param {number} version bumped on every line
 * @param {{at_us: number}[]} chat
 * @returns {string}
 */
export function logKey(version, chat) {
  return `${version}/${chat.length}/${chat[chat.length - 1]?.at_us ?? ''}`;
}

/**
 * The log box's children: the game's lines, then the chat, its names in bold.
 * @param {string[]} log
 * @param {{name: string, text: string}[]} chat
 * @returns {Array<Node|null>}
 */
export function logContent(log, chat) {
  return [log.map((t) => h('p', {}, t)), chat.length ? h('h3', { style: 'font-size:0.95rem;margin-top:8px' }, 'Chat') : null,
    chat.map((c) => h('p', { class: 'chat-line' }, h('strong', {}, `${c.name}: `), c.text))];
}
