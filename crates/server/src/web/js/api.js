// The REST API (described by the OpenAPI document, served at /api/docs), and who we are.
//
// A logged-in person's session travels as the HttpOnly cookie the server
// sets; every write carries `X-Requested-With`, which the server requires of
// cookie-authenticated writes (its CSRF rule). A guest's seat tokens are kept
// in this browser's localStorage, one per table, so a refresh finds the seat.

/** A refusal from the server: `code` and `message` as its error body gives them. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * Calls the API: `method`, a path under /api/v1, an optional JSON body and
 * options (`token`: a seat token to send as the bearer). Answers the parsed
 * JSON (null for an empty body) or throws an ApiError.
 */
export async function api(method, path, body, { token } = {}) {
  const headers = { 'X-Requested-With': 'mahjong-web' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(`/api/v1${path}`, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin',
    });
  } catch (e) {
    throw new ApiError(0, 'network', 'the server cannot be reached');
  }
  const text = await response.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (!response.ok) {
    const err = data?.error ?? {};
    throw new ApiError(response.status, err.code ?? 'http', err.message ?? `${response.status} ${response.statusText}`);
  }
  return data;
}

const LOGGED_IN_KEY = 'mj.loggedIn';

/**
 * The logged-in account (`GET /me`), or null for a guest. The session cookie
 * is out of the page's reach (HttpOnly): a flag in localStorage says whether
 * there may be one, so a guest's page does not ask (and log a 401) for nothing.
 */
export async function whoAmI() {
  if (!localStorage.getItem(LOGGED_IN_KEY)) return null;
  try {
    return await api('GET', '/me');
  } catch (e) {
    if (e.status === 401) { markLoggedIn(false); return null; }
    throw e;
  }
}

/** Notes whether this browser holds a session now. */
export function markLoggedIn(yes) {
  if (yes) localStorage.setItem(LOGGED_IN_KEY, '1');
  else localStorage.removeItem(LOGGED_IN_KEY);
}

const SEATS_KEY = 'mj.seats';
const NAME_KEY = 'mj.guestName';

/** This browser's seats at tables as a guest: { tableId: { seat, token, name } }. */
export function guestSeats() {
  try {
    return JSON.parse(localStorage.getItem(SEATS_KEY) ?? '{}') ?? {};
  } catch {
    return {};
  }
}

/** Remembers (or, with null, forgets) our guest seat at a table. */
export function rememberSeat(tableId, seat) {
  const seats = guestSeats();
  if (seat) seats[tableId] = seat;
  else delete seats[tableId];
  localStorage.setItem(SEATS_KEY, JSON.stringify(seats));
}

/** The name this browser last played under as a guest. */
export function guestName() {
  return localStorage.getItem(NAME_KEY) ?? '';
}

export function rememberGuestName(name) {
  localStorage.setItem(NAME_KEY, name);
}
