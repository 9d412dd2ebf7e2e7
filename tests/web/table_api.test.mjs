// The table screen's REST calls (crates/server/src/web/js/table_api.js) as
// they leave the page: method, path, body and the guest's seat token, through
// a stand-in for fetch; the token read from (and forgotten in) this browser's
// storage; the invitation link.

import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';

const stored = new Map();
globalThis.localStorage = {
  getItem: (k) => (stored.has(k) ? stored.get(k) : null),
  setItem: (k, v) => stored.set(k, String(v)),
  removeItem: (k) => stored.delete(k),
};
const sent = [];
let answer = { status: 200, body: '' };
globalThis.fetch = async (url, init) => {
  sent.push({ url, ...init, body: init.body === undefined ? undefined : JSON.parse(init.body) });
  const { status, body } = answer;
  return { ok: status < 400, status, statusText: 'x', text: async () => body };
};

const tableApi = await import('../../crates/server/src/web/js/table_api.js');

beforeEach(() => {
  stored.clear();
  sent.length = 0;
  answer = { status: 200, body: '' };
  stored.set('mj.seats', JSON.stringify({ 'table 1': { seat: 2, token: 'tok-2', name: 'Cy' } }));
});

test('the seat token is this browser\'s guest token for the table, or null', () => {
  assert.equal(tableApi.seatToken('table 1'), 'tok-2');
  assert.equal(tableApi.seatToken('elsewhere'), null);
  stored.set('mj.seats', 'not json');
  assert.equal(tableApi.seatToken('table 1'), null);
});

test('each call\'s method, path and body, with the seat token as the bearer', async () => {
  const token = tableApi.seatToken('table 1');
  await tableApi.addRobot('t1', 3, token);
  await tableApi.removeRobot('t1', 3, token);
  await tableApi.startGame('t1', token);
  await tableApi.handEvents('table 1', 2, null);
  assert.deepEqual(sent.map((r) => [r.method, r.url, r.body]), [
    ['POST', '/api/v1/tables/t1/robots', { seat: 3 }],
    ['DELETE', '/api/v1/tables/t1/robots/3', undefined],
    ['POST', '/api/v1/tables/t1/start', undefined],
    ['GET', '/api/v1/games/table%201/hands/2/events', undefined],
  ]);
  assert.equal(sent[0].headers.Authorization, 'Bearer tok-2');
  assert.equal(sent[0].headers['Content-Type'], 'application/json');
  assert.equal(sent[1].headers['Content-Type'], undefined, 'no body, no content type');
  assert.equal(sent[3].headers.Authorization, undefined, 'an account (no token) sends none');
  for (const r of sent) assert.equal(r.headers['X-Requested-With'], 'mahjong-web', `${r.method} ${r.url}`);
});

test('a hand\'s events come back parsed', async () => {
  answer = { status: 200, body: JSON.stringify({ events: [{ seq: 1, at_us: 5, event: { type: 'game_started' } }] }) };
  const history = await tableApi.handEvents('t1', 1, 'tok');
  assert.deepEqual(history.events.map((e) => e.event.type), ['game_started']);
});

test('leaving forgets the seat here once the server agreed, and not when it refused', async () => {
  answer = { status: 403, body: JSON.stringify({ error: { code: 'forbidden', message: 'not your seat' } }) };
  await assert.rejects(tableApi.leaveSeat('table 1', 'tok-2'), /not your seat/);
  assert.equal(tableApi.seatToken('table 1'), 'tok-2');
  answer = { status: 204, body: '' };
  await tableApi.leaveSeat('table 1', 'tok-2');
  assert.deepEqual(sent.map((r) => [r.method, r.url]), [['DELETE', '/api/v1/tables/table 1/seats'], ['DELETE', '/api/v1/tables/table 1/seats']]);
  assert.equal(tableApi.seatToken('table 1'), null);
});

test('a refusal reaches the caller with the server\'s message (the screen shows it)', async () => {
  answer = { status: 409, body: JSON.stringify({ error: { code: 'conflict', message: 'the seat is taken' } }) };
  await assert.rejects(tableApi.addRobot('t1', 1, null), (err) => err.status === 409 && err.message === 'the seat is taken');
});

test('the invitation link is this page\'s address with #/table/ID?join', () => {
  const here = { origin: 'https://mj.example', pathname: '/' };
  assert.equal(tableApi.invitationLink(here, 'abc'), 'https://mj.example/#/table/abc?join');
  assert.equal(tableApi.invitationLink({ origin: 'http://h:8080', pathname: '/play/' }, 'a b/c'), 'http://h:8080/play/#/table/a%20b%2Fc?join');
});
