// A table's WebSocket, kept open: it reconnects by itself after a drop and
// resumes the stream with `since` (docs/protocol.md, "Resuming with since"),
// so nothing is missed and nothing comes twice. A seat is played with its
// seat token (a guest's) or with the session cookie (an account's).

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];

// How often the client pings the table. A table answers every ping (`pong`),
// so a socket that has brought nothing since the last ping is silent: the
// stream behind it has stopped (a server node that was paused, say) though
// the socket itself lives. It is dropped and opened again, resuming: a
// stopped stream is noticed within two pings, well inside the 10 s in which
// a follower must hear its table again after a node fails.
const PING_EVERY_MS = 3000;

// A socket that has not opened after this long is given up and opened again
// (a paused node accepts the connection but never answers it; the proxy
// sends the next attempt to a node that answers its health checks). Each
// attempt in a row waits twice as long, up to 32 s: a slow network (a phone's)
// still gets its socket open.
const OPEN_WITHIN_MS = 4000;
const OPEN_WITHIN_MAX_MS = 32000;

// Close codes after which reconnecting cannot help (docs/protocol.md, "Close codes").
const ENDED_FOR_GOOD = [4001, 4002, 4003];

/**
 * Opens and keeps open the WebSocket of table `tableId`. `handlers` get the
 * server's messages: `message(msg)` for each, `status(text)` when the
 * connection's state changes, `closed(code, reason)` when the server ends it
 * for good (the seat was taken over, the session ended, the table closed).
 * `lastSeq()` tells the last event number the caller has applied.
 */
export class TableConnection {
  constructor(tableId, { token = null, handlers, lastSeq }) {
    this.tableId = tableId;
    this.token = token;
    this.handlers = handlers;
    this.lastSeq = lastSeq;
    this.attempt = 0;
    this.closedForGood = false;
    this.ws = null;
    this.pingTimer = null;
    this.opening = null;
    this.heard = false;
    this.open();
  }

  url(since) {
    const params = new URLSearchParams();
    if (this.token) params.set('token', this.token);
    if (since != null && since > 0) params.set('since', String(since));
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const query = params.toString();
    return `${scheme}://${location.host}/api/v1/tables/${this.tableId}/ws${query ? `?${query}` : ''}`;
  }

  open() {
    // After two failures in a row, resume from a fresh snapshot rather than
    // `since`: the table may have restarted its stream.
    const since = this.attempt < 2 ? this.lastSeq() : null;
    const ws = new WebSocket(this.url(since));
    this.ws = ws;
    this.handlers.status(this.attempt ? 'reconnecting' : 'connecting');
    clearTimeout(this.opening);
    const openWithin = Math.min(OPEN_WITHIN_MS * 2 ** this.attempt, OPEN_WITHIN_MAX_MS);
    this.opening = setTimeout(() => {
      if (this.ws === ws && ws.readyState === WebSocket.CONNECTING) this.reopen();
    }, openWithin);
    ws.onopen = () => {
      clearTimeout(this.opening);
      this.attempt = 0;
      this.handlers.status('connected');
      clearInterval(this.pingTimer);
      this.heard = true;
      this.pingTimer = setInterval(() => this.checkHeard(ws), PING_EVERY_MS);
    };
    ws.onmessage = (m) => {
      this.heard = true;
      let msg;
      try { msg = JSON.parse(m.data); } catch { return; }
      this.handlers.message(msg);
    };
    ws.onclose = (e) => {
      clearInterval(this.pingTimer);
      clearTimeout(this.opening);
      if (this.ws !== ws || this.closedForGood) return;
      // 4001: the session ended; 4002: a newer connection plays the seat;
      // 4003: the seat was left; 1000 from the server: the table closed.
      // None is worth retrying. (4000, fell behind, is: it reconnects below.)
      if (ENDED_FOR_GOOD.includes(e.code) || (e.code === 1000 && e.reason)) {
        this.closedForGood = true;
        this.handlers.closed(e.code, e.reason);
        return;
      }
      const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
      this.attempt += 1;
      this.handlers.status('reconnecting');
      this.retry = setTimeout(() => this.open(), delay);
    };
  }

  /** Pings the table, or opens the socket again if nothing came since the last ping. */
  checkHeard(ws) {
    if (this.ws !== ws || this.closedForGood) return;
    if (!this.heard) {
      this.reopen();
      return;
    }
    this.heard = false;
    this.send({ type: 'ping' });
  }

  /** Lets a silent socket go (its close is not waited for) and opens another. */
  reopen() {
    clearInterval(this.pingTimer);
    const silent = this.ws;
    this.ws = null;
    silent?.close();
    this.attempt += 1;
    this.handlers.status('reconnecting');
    this.retry = setTimeout(() => this.open(), BACKOFF_MS[0]);
  }

  /** Sends a client message; false when the socket is not open. */
  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /** Drops the socket as a network failure would (it then reconnects). */
  drop() {
    this.ws?.close();
  }

  /** Closes for good. */
  close() {
    this.closedForGood = true;
    clearTimeout(this.retry);
    clearTimeout(this.opening);
    clearInterval(this.pingTimer);
    this.ws?.close(1000);
  }
}
