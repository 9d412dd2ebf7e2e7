// The REST calls the table screen makes (moves go over its WebSocket, not
// here): a hand's stored events for the log after a refresh, robots in and
// out, the start, leaving the seat; and the invitation link. A guest's calls
// carry its seat token, kept by api.js per table; an account's travel with
// its session cookie and no token. Each call answers api()'s promise, so the
// screen decides what a refusal shows.

import { api, guestSeats, rememberSeat } from './api.js';

/**
 * This browser's guest seat token at table `id`, or null (an account, or no seat).
 * @param {string} id the table
 * @returns {string|null}
 */
export function seatToken(id) {
  return guestSeats()[id]?.token ?? null;
}

/**
 * The link that seats a friend at table `id` (or lets them watch): this
 * page's address with `#/table/ID?join`.
 * @param {{origin: string, pathname: string}} here the page's location
 * @param {string} id the table
 * @returns {string}
 */
export function invitationLink(here, id) {
  return `${here.origin}${here.pathname}#/table/${encodeURIComponent(id)}?join`;
}

/**
 * Hand `hand`'s stored events of game `id`, as this seat (or a spectator) saw them.
 * @param {string} id the game (a table's id is its game's)
 * @param {number} hand from 1
 * @param {string|null} token
 * @returns {Promise<{events: object[]}>}
 */
export function handEvents(id, hand, token) {
  return api('GET', `/games/${encodeURIComponent(id)}/hands/${hand}/events`, undefined, { token });
}

/**
 * Seats a robot at a free seat.
 * @param {string} id the table
 * @param {number} seat
 * @param {string|null} token
 */
export function addRobot(id, seat, token) {
  return api('POST', `/tables/${id}/robots`, { seat }, { token });
}

/**
 * Takes a robot off its seat.
 * @param {string} id the table
 * @param {number} seat
 * @param {string|null} token
 */
export function removeRobot(id, seat, token) {
  return api('DELETE', `/tables/${id}/robots/${seat}`, undefined, { token });
}

/**
 * Starts the game (the manager, with four players seated).
 * @param {string} id the table
 * @param {string|null} token
 */
export function startGame(id, token) {
  return api('POST', `/tables/${id}/start`, undefined, { token });
}

/**
 * Leaves our seat, and once the server agreed forgets its token here.
 * @param {string} id the table
 * @param {string|null} token
 */
export async function leaveSeat(id, token) {
  await api('DELETE', `/tables/${id}/seats`, undefined, { token });
  rememberSeat(id, null);
}
