// The table's WebSocket (crates/server/src/web/js/connection.js): which close codes it
// reconnects after, and which end it for good (docs/protocol.md, "Close codes").

import { test } from 'node:test';
import assert from 'node:assert/strict';

const sockets = [];
class FakeSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  // The state a new socket starts in (a test of a socket that never opens sets CONNECTING).
  static startIn = FakeSocket.OPEN;
  constructor(url) {
    this.url = url;
    this.readyState = FakeSocket.startIn;
    sockets.push(this);
  }
  send() {}
  close() {}
}
globalThis.WebSocket = FakeSocket;
globalThis.location = { protocol: 'http:', host: 'example.test' };

const { TableConnection } = await import('../../crates/server/src/web/js/connection.js');

function connect() {
  const seen = { closed: [], statuses: [] };
  const handlers = {
    message() {},
    status: (s) => seen.statuses.push(s),
    closed: (code, reason) => seen.closed.push([code, reason]),
  };
  const connection = new TableConnection('t1', { token: 'tok', handlers, lastSeq: () => 41 });
  return { connection, seen, socket: sockets.at(-1) };
}

test('a connection that fell behind (4000) reconnects, resuming after the last event', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  const { connection, seen, socket } = connect();
  socket.onopen();
  const before = sockets.length;
  socket.onclose({ code: 4000, reason: 'fell behind: reconnect' });
  assert.deepEqual(seen.closed, [], 'not closed for good');
  t.mock.timers.tick(250);
  assert.equal(sockets.length, before + 1, 'a new socket');
  assert.match(sockets.at(-1).url, /since=41/);
  connection.close();
});

for (const [code, why] of [[4001, 'session ended'], [4002, 'replaced'], [4003, 'seat left']]) {
  test(`a connection closed with ${code} (${why}) is closed for good`, (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
    const { seen, socket } = connect();
    socket.onopen();
    const before = sockets.length;
    socket.onclose({ code, reason: why });
    t.mock.timers.tick(10000);
    assert.deepEqual(seen.closed, [[code, why]]);
    assert.equal(sockets.length, before, 'no new socket');
  });
}

test('a socket that brings nothing, not even a pong, is dropped and opened again', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  const { connection, seen, socket } = connect();
  const sent = [];
  socket.send = (text) => sent.push(JSON.parse(text));
  socket.onopen();
  // A live table answers each ping (every 3 s): the socket stays.
  for (let i = 0; i < 3; i += 1) {
    t.mock.timers.tick(3000);
    assert.deepEqual(sent.at(-1), { type: 'ping' });
    socket.onmessage({ data: '{"type":"pong"}' });
  }
  const before = sockets.length;
  t.mock.timers.tick(3000);
  assert.equal(sockets.length, before, 'a ping unanswered for less than its period is fine');
  // Nothing since that ping: silent, noticed within two pings.
  t.mock.timers.tick(3000);
  t.mock.timers.tick(250);
  assert.equal(sockets.length, before + 1, 'a new socket');
  assert.match(sockets.at(-1).url, /since=41/, 'resuming after the last event');
  assert.deepEqual(seen.closed, [], 'not closed for good');
  assert.equal(seen.statuses.at(-1), 'reconnecting');
  // The silent socket's own close, when it comes, changes nothing.
  socket.onclose({ code: 1006, reason: '' });
  t.mock.timers.tick(10000);
  assert.equal(sockets.length, before + 1);
  connection.close();
});

test('a socket that has not opened within 4 s (8 s the next time) is given up and opened again', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  FakeSocket.startIn = FakeSocket.CONNECTING;
  const { connection, socket } = connect();
  FakeSocket.startIn = FakeSocket.OPEN;
  let closed = false;
  socket.close = () => { closed = true; };
  const before = sockets.length;
  t.mock.timers.tick(3999);
  assert.equal(sockets.length, before, 'still waiting');
  t.mock.timers.tick(1);
  t.mock.timers.tick(250);
  assert.ok(closed, 'the socket that never opened is let go');
  assert.equal(sockets.length, before + 1, 'a new socket');
  // The next attempt waits twice as long (a slow network gets its socket open).
  sockets.at(-1).readyState = FakeSocket.CONNECTING;
  t.mock.timers.tick(7999);
  assert.equal(sockets.length, before + 1, 'still waiting, twice as long');
  t.mock.timers.tick(1);
  t.mock.timers.tick(500);
  assert.equal(sockets.length, before + 2, 'a third socket');
  // One that opens in time stays.
  sockets.at(-1).onopen();
  t.mock.timers.tick(4000);
  assert.equal(sockets.length, before + 2);
  connection.close();
});
