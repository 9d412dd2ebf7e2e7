// This browser's table settings, kept in localStorage: being asked about
// every discard (also told to the table, which keeps it for the seat), the
// discards in one pool or by player, the wall drawn, animations, and whether
// the first-game hints were read.

/** Where this browser keeps the player's wish to be asked about every discard. */
const EVERY_DISCARD_KEY = 'mj.everyDiscard';

/** Where this browser keeps the choice of one pool of discards (xmj's) over discards by player. */
const ONE_POOL_KEY = 'mj.onePool';

/** This browser's display settings, each a flag in localStorage: key, default, label, why. */
export const VIEW_SETTINGS = {
  showWall: ['mj.showWall', true, 'Show the wall', 'The live wall and the dead wall, as xmj --show-wall draws them'],
  motion: ['mj.motion', true, 'Animations', 'Discards and drawn tiles slide into place (off also when the system asks for less motion)'],
};

/** A display setting's value. */
export function viewSetting(name) {
  const [key, fallback] = VIEW_SETTINGS[name];
  const v = localStorage.getItem(key);
  return v == null ? fallback : v === '1';
}

/** Sets a display setting. */
export function setViewSetting(name, on) {
  localStorage.setItem(VIEW_SETTINGS[name][0], on ? '1' : '0');
}

/** Tiles move (the setting on, and the system not asking for less motion). */
export function moving() {
  return viewSetting('motion') && !matchMedia('(prefers-reduced-motion: reduce)').matches;
}

/** Where this browser keeps that the first-game hints were read. */
export const HINTS_KEY = 'mj.hintsRead';

/** The discards are drawn in one pool (xmj's), not in front of each player. */
export function onePool() {
  const chosen = localStorage.getItem(ONE_POOL_KEY);
  // Unchosen: one pool on a narrow screen, where four rows of discards cost too much height.
  return chosen == null ? matchMedia('(max-width: 600px)').matches : chosen === '1';
}

/** Chooses one pool of discards, or discards by player. */
export function setOnePool(on) {
  localStorage.setItem(ONE_POOL_KEY, on ? '1' : '0');
}

/** The player wants to be asked about every discard, even with nothing to claim. */
export function everyDiscard() {
  return localStorage.getItem(EVERY_DISCARD_KEY) === '1';
}

/** Keeps the wish to be asked about every discard (the caller tells the table). */
export function setEveryDiscard(on) {
  localStorage.setItem(EVERY_DISCARD_KEY, on ? '1' : '0');
}
