// Our concealed tiles, the one part of the felt we handle: a row of buttons
// in the order we arranged them (sorted as xmj sorts them until we move
// one), the selected tile (click, ←/→, or offered when it is our turn to
// discard), dragging to rearrange, double-clicking to discard. Which tile
// is selected after a redraw, and which discard a click sends, are worked
// out as plain data (selectionIn, discardChoice) that node tests read.

import { h, toast } from './dom.js';
import { tileElement, tileName } from './tiles.js';
import { arrange, moveTile } from './arrangement.js';
import { moving } from './table_settings.js';
import { renderActions } from './claim_panel.js';

/**
 * The selected index in `arrangement` once it is drawn: the tile just
 * drawn when the prompt named it (`preselect`), else the selection kept;
 * with nothing chosen on our turn to discard (East's first discard), the
 * rightmost tile that may be discarded; never past the end.
 * @param {string[]} arrangement our tiles in their order
 * @param {object} now
 * @param {number|null} now.selected the selection before
 * @param {string|null|undefined} now.preselect a tile to select (the one just drawn)
 * @param {object|null} now.prompt the seat's latest prompt
 * @returns {number|null}
 */
export function selectionIn(arrangement, { selected, preselect, prompt }) {
  let s = selected;
  if (preselect) {
    const i = arrangement.lastIndexOf(preselect);
    if (i >= 0) s = i;
  }
  if (s == null && prompt?.decision === 'discard') {
    const may = new Set(prompt.actions.filter((a) => a.action === 'discard').map((a) => a.tile));
    for (let i = arrangement.length - 1; i >= 0; i--) if (may.has(arrangement[i])) { s = i; break; }
  }
  if (s != null && s >= arrangement.length) s = arrangement.length ? arrangement.length - 1 : null;
  return s;
}

/**
 * The discard the prompt lists for `tile` (with or without calling), or
 * why there is none: a refusal to show on our turn to discard, else null.
 * @param {object|null} prompt
 * @param {string|null} tile the selected tile
 * @param {boolean} calling an Original Call
 * @returns {{action: object}|{refusal: string|null}}
 */
export function discardChoice(prompt, tile, calling) {
  const action = prompt?.actions.find((a) => a.action === 'discard' && a.tile === tile && a.calling === calling);
  if (action) return { action };
  return { refusal: prompt?.decision === 'discard' ? (tile ? `You may not discard ${tileName(tile)} now.` : 'Select a tile to discard.') : null };
}

/**
 * Discards the selected tile, or says why it cannot be.
 * @param {import('./table.js').TableScreen} screen
 * @param {boolean} calling
 */
export function discardSelected(screen, calling) {
  const choice = discardChoice(screen.prompt, screen.selectedTile(), calling);
  if (choice.action) screen.act(choice.action);
  else if (choice.refusal) toast(choice.refusal);
}

/**
 * Our concealed tiles, as buttons: click to select, double-click to discard.
 * Arranges them (screen.arrangement) and settles the selection first.
 * @param {import('./table.js').TableScreen} screen
 * @param {object} seat our seat's view in the hand
 * @returns {HTMLElement}
 */
export function renderMyHand(screen, seat) {
  const drawn = screen.prompt?.decision === 'discard' ? screen.prompt.drawn : null;
  screen.arrangement = arrange(screen.arrangement, seat.concealed, { sorted: screen.autoSort, drawn });
  screen.selected = selectionIn(screen.arrangement, { selected: screen.selected, preselect: screen.preselect, prompt: screen.prompt });
  if (screen.preselect) screen.preselect = null;
  const row = h('div', { class: 'hand-row', id: 'my-hand', role: 'listbox', 'aria-label': 'Your concealed tiles', 'aria-orientation': 'horizontal' });
  screen.arrangement.forEach((t, i) => {
    const el = tileElement(t, { tag: 'button' });
    el.setAttribute('role', 'option');
    el.setAttribute('aria-selected', String(i === screen.selected));
    el.setAttribute('aria-pressed', String(i === screen.selected));
    el.tabIndex = i === (screen.selected ?? 0) ? 0 : -1;
    el.dataset.index = i;
    if (drawn && i === screen.arrangement.length - 1 && screen.autoSort && t === drawn) {
      el.classList.add('drawn');
      // The tile just drawn slides in from the wall, once.
      const key = `${screen.state.game?.hand?.number}/${screen.prompt?.seq}`;
      if (moving() && screen.animatedDraw !== key) {
        screen.animatedDraw = key;
        el.classList.add('arriving');
      }
    }
    // The row is not redrawn for a click, so that a double click lands on one element.
    el.addEventListener('click', () => { screen.selected = i; markSelection(screen); renderActions(screen); el.focus(); });
    el.addEventListener('dblclick', () => { screen.selected = i; screen.discardSelected(false); });
    el.draggable = true;
    el.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', String(i)));
    el.addEventListener('dragover', (e) => e.preventDefault());
    el.addEventListener('drop', (e) => {
      e.preventDefault();
      const from = Number(e.dataTransfer.getData('text/plain'));
      screen.arrangement = moveTile(screen.arrangement, from, i);
      screen.autoSort = false;
      screen.selected = i;
      screen.schedule();
    });
    row.append(el);
  });
  return row;
}

/**
 * Shows the selection on the tiles already drawn.
 * @param {import('./table.js').TableScreen} screen
 */
export function markSelection(screen) {
  for (const el of screen.view.querySelectorAll('#my-hand [data-index]')) {
    const on = Number(el.dataset.index) === screen.selected;
    el.setAttribute('aria-selected', String(on));
    el.setAttribute('aria-pressed', String(on));
    el.tabIndex = on ? 0 : -1;
  }
}

/**
 * Moves the keyboard focus to the selected tile.
 * @param {import('./table.js').TableScreen} screen
 */
export function focusSelected(screen) {
  const el = screen.view.querySelector(`#my-hand [data-index="${screen.selected}"]`);
  el?.focus();
}
