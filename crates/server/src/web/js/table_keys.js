// The table's keyboard, xmj's accelerators: ←/→ move the selection in our
// hand (with Shift, the tile itself), Enter or Space does the default move
// (the button marked data-default, else the first), a letter presses the
// button that underlines it (data-key), and R answers the scoring window.
// keyCommand decides from plain facts about the key and the screen, so node
// tests read the bindings; onTableKey gathers the facts and carries it out.

import { moveTile } from './arrangement.js';
import { focusSelected } from './my_hand.js';

/**
 * What a key press at the table asks for, or null when it is not the
 * table's (typed into a field, a modified key, another dialog open, a
 * button's own Enter...).
 * @param {{key: string, shiftKey?: boolean, ctrlKey?: boolean, metaKey?: boolean, altKey?: boolean}} e the key
 * @param {object} at what the screen shows
 * @param {boolean} at.typing the key went to a text field or a select
 * @param {boolean} at.scoresOpen the scoring window is open
 * @param {boolean} at.dialogOpen some other dialog is open
 * @param {number} at.tiles how many tiles our hand row holds
 * @param {number|null} at.selected the selected tile's index
 * @param {boolean} at.seated we have a seat (a spectator's hand is not ours to arrange)
 * @param {boolean} at.onButton the key went to a focused button outside our hand
 * @returns {null|{do: 'score-ready'}|{do: 'select', to: number, move: boolean}|{do: 'default'}|{do: 'letter', letter: string}}
 */
export function keyCommand(e, at) {
  if (at.typing) return null;
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  if (at.scoresOpen) return e.key.toLowerCase() === 'r' ? { do: 'score-ready' } : null;
  if (at.dialogOpen) return null;
  const n = at.tiles;
  if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && n && at.seated) {
    const step = e.key === 'ArrowLeft' ? -1 : 1;
    const from = at.selected ?? (step > 0 ? -1 : n);
    const to = Math.min(n - 1, Math.max(0, from + step));
    return { do: 'select', to, move: !!e.shiftKey && at.selected != null };
  }
  if (e.key === 'Enter' || e.key === ' ') {
    // The focused button's own click: the browser presses it.
    return at.onButton ? null : { do: 'default' };
  }
  if (e.key.length === 1) return { do: 'letter', letter: e.key.toLowerCase() };
  return null;
}

/**
 * The button a `default` or `letter` command presses among `buttons` (the
 * dock's enabled buttons, in order), or undefined.
 * @template {{dataset: {default?: string, key?: string}}} B
 * @param {{do: string, letter?: string}} command
 * @param {B[]} buttons
 * @returns {B|undefined}
 */
export function buttonFor(command, buttons) {
  if (command.do === 'default') return buttons.find((b) => b.dataset.default) ?? buttons[0];
  return buttons.find((x) => x.dataset.key && x.dataset.key === command.letter);
}

/**
 * The table screen's keydown listener: carries out keyCommand.
 * @param {import('./table.js').TableScreen} screen
 * @param {KeyboardEvent} e
 */
export function onTableKey(screen, e) {
  const t = e.target;
  const command = keyCommand(e, {
    typing: t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement,
    scoresOpen: !!screen.scoreDialog?.open,
    dialogOpen: !!document.querySelector('dialog[open]'),
    tiles: screen.arrangement.length,
    selected: screen.selected,
    seated: screen.state?.seat != null,
    onButton: t instanceof HTMLButtonElement && !t.closest('#my-hand'),
  });
  if (!command) return;
  if (command.do === 'score-ready') {
    screen.scoreDialog.querySelector('#score-ready')?.click();
    e.preventDefault();
    return;
  }
  if (command.do === 'select') {
    if (command.move) {
      screen.arrangement = moveTile(screen.arrangement, screen.selected, command.to);
      screen.autoSort = false;
    }
    screen.selected = command.to;
    e.preventDefault();
    screen.render();
    focusSelected(screen);
    return;
  }
  const scope = [screen.claimBox, screen.actionsBox];
  const button = buttonFor(command, scope.flatMap((el) => [...el.querySelectorAll('button:not(:disabled)')]));
  if (button) { e.preventDefault(); button.click(); }
}
