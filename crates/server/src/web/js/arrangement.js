// Our concealed tiles in the order shown: xmj's sorted order, the tile just
// drawn kept apart at the right until it is played, or the player's own
// order once re-arranged by hand (new tiles then join at the right).

import { sortTiles } from './tiles.js';

/** Takes one of each of `remove` out of `tiles` (a new array). */
function without(tiles, remove) {
  const rest = [...tiles];
  for (const t of remove) {
    const i = rest.indexOf(t);
    if (i >= 0) rest.splice(i, 1);
  }
  return rest;
}

/**
 * The order to show `concealed` (the tiles held, as the server lists them)
 * in: `sorted` in xmj's order, with `drawn` (the tile just drawn, if any) last;
 * otherwise `previous`'s order for the tiles still held, new ones after.
 */
export function arrange(previous, concealed, { sorted = true, drawn = null } = {}) {
  if (sorted) {
    if (drawn && concealed.includes(drawn)) return [...sortTiles(without(concealed, [drawn])), drawn];
    return sortTiles(concealed);
  }
  const kept = [];
  let pool = [...concealed];
  for (const t of previous) {
    const i = pool.indexOf(t);
    if (i >= 0) {
      kept.push(t);
      pool.splice(i, 1);
    }
  }
  pool = sortTiles(pool);
  return [...kept, ...pool];
}

/** `tiles` with the tile at `from` moved to `to` (a new array). */
export function moveTile(tiles, from, to) {
  const out = [...tiles];
  if (from < 0 || from >= out.length || to < 0 || to >= out.length) return out;
  const [t] = out.splice(from, 1);
  out.splice(to, 0, t);
  return out;
}
