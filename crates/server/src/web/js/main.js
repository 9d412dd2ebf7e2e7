// The client's entry point: who we are (the header's account area) and
// which screen is shown, by the page's hash: #/ the lobby, #/table/ID a table,
// #/games the stored games, #/replay/GAME/HAND a replay, #/standings, #/calculator,
// #/help the rules (#/help/ANCHOR scrolled to a section or a scoring item).

import { api, whoAmI, ApiError } from './api.js';
import { h, fill } from './dom.js';
import { session } from './session.js';
import { showLobby } from './lobby.js';
import { TableScreen } from './table.js';
import { showGames, showReplay } from './replay.js';
import { showStandings } from './standings.js';
import { showHelp } from './help.js';

let current = null; // the screen shown: has dispose() when it holds resources

async function route() {
  current?.dispose?.();
  current = null;
  const view = document.getElementById('view');
  const parts = location.hash.replace(/^#\/?/, '').split('?')[0].split('/').filter(Boolean).map(decodeURIComponent);
  for (const a of document.querySelectorAll('header.site nav a')) {
    const target = a.getAttribute('href').replace(/^#\/?/, '').split('/')[0];
    if (target === (parts[0] ?? '') || (target === 'games' && parts[0] === 'replay')) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  try {
    switch (parts[0] ?? '') {
      case '':
        current = showLobby(view);
        break;
      case 'table':
        current = new TableScreen(view, parts[1]);
        break;
      case 'games':
        current = await showGames(view);
        break;
      case 'replay':
        current = await showReplay(view, parts[1], Number(parts[2] ?? 1));
        break;
      case 'standings':
        current = await showStandings(view);
        break;
      case 'calculator': {
        const { mountCalculator } = await import('./calculator.js');
        fill(view);
        current = mountCalculator(view, { api, session }) ?? null;
        break;
      }
      case 'help':
        current = showHelp(view, parts[1]) ?? null;
        break;
      default:
        fill(view, h('h1', {}, 'No such page'), h('p', {}, h('a', { href: '#/' }, 'Back to the lobby')));
    }
  } catch (err) {
    fill(view, h('h1', {}, 'Something went wrong'), h('p', { class: 'error-text' }, err instanceof ApiError ? err.message : String(err)),
      h('p', {}, h('a', { href: '#/' }, 'Back to the lobby')));
  }
}

async function boot() {
  try {
    session.set(await whoAmI());
  } catch {
    session.set(null);
  }
  window.addEventListener('hashchange', route);
  await route();
}

boot();
