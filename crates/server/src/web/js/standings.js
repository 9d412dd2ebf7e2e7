// Standings: every player's record over the stored games (GET /standings),
// best net settlement first, a page at a time.

import { api } from './api.js';
import { h, fill } from './dom.js';

const PAGE = 50;

/** The standings table. */
export async function showStandings(view) {
  const offset = Number(new URLSearchParams(location.hash.split('?')[1] ?? '').get('offset') ?? 0) || 0;
  const data = await api('GET', `/standings?limit=${PAGE}&offset=${offset}`);
  const rows = data.standings;
  fill(view, h('section', { class: 'card' },
    h('h1', {}, 'Standings'),
    h('p', { class: 'muted' }, 'Over every game played here, best net settlement first. A robot\'s line gathers every robot that sat in its seat.'),
    rows.length ? h('table', { class: 'data', id: 'standings' },
      h('thead', {}, h('tr', {},
        h('th', {}, '#'), h('th', {}, 'Player'), h('th', { class: 'num' }, 'Games'), h('th', { class: 'num' }, 'Games won'),
        h('th', { class: 'num' }, 'Hands'), h('th', { class: 'num' }, 'Mah-Jongs'), h('th', { class: 'num' }, 'Mean hand score'),
        h('th', { class: 'num' }, 'Net settlement'))),
      h('tbody', {}, rows.map((r, i) => h('tr', {},
        h('td', {}, offset + i + 1),
        h('td', {}, r.name, r.robot ? h('span', { class: 'robot-tag' }, 'robot') : '', r.account != null ? h('span', { class: 'robot-tag', title: 'a registered account' }, 'account') : ''),
        h('td', { class: 'num' }, r.games_played), h('td', { class: 'num' }, r.games_won),
        h('td', { class: 'num' }, r.hands_played), h('td', { class: 'num' }, r.mah_jongs),
        h('td', { class: 'num' }, r.mean_score == null ? '–' : r.mean_score.toFixed(2)),
        h('td', { class: 'num' }, r.net_settlement))))) : h('p', { class: 'muted' }, 'No games yet.'),
    h('p', { class: 'row' },
      offset > 0 ? h('a', { class: 'button', href: `#/standings?offset=${Math.max(0, offset - PAGE)}` }, 'Previous') : null,
      offset + PAGE < data.total ? h('a', { class: 'button', href: `#/standings?offset=${offset + PAGE}` }, 'Next') : null)));
  return null;
}
