// Tiles: their names, their order in a hand, their Unicode characters and
// their pictures (SVG drawn here, from shapes: no artwork and no font needed).
//
// Tile codes are the server's: 1B..9B bamboo, 1C..9C characters, 1D..9D
// circles, EW SW WW NW winds, RD WD GD dragons, 1F..4F flowers, 1S..4S
// seasons, 1A..4A animals. `null` is a tile the viewer may not see.

const SUITS = { B: 'Bamboo', C: 'Characters', D: 'Circles' };

/** The seat winds in playing order, East first (as a settlement indexes them). */
export const WINDS = ['East', 'South', 'West', 'North'];
const WIND_NAMES = { EW: 'East', SW: 'South', WW: 'West', NW: 'North' };
const DRAGONS = { RD: 'Red', WD: 'White', GD: 'Green' };
const FLOWERS = ['Plum', 'Orchid', 'Chrysanthemum', 'Bamboo'];
const SEASONS = ['Spring', 'Summer', 'Autumn', 'Winter'];
const ANIMALS = ['Cat', 'Mouse', 'Cockerel', 'Centipede'];

/** Is `code` a tile code? */
export function isTile(code) {
  return typeof code === 'string' && /^([1-9][BCD]|[ESWN]W|[RWG]D|[1-4][FSA])$/.test(code);
}

/** The tile's name as xmj's tiletips give it: "3 Bamboo", "East Wind", "Red Dragon", "Plum (flower 1)". */
export function tileName(code) {
  if (code == null) return 'concealed tile';
  // Before the suits: a dragon's code also ends in D (RD), as circles' do (5D).
  if (code in WIND_NAMES) return `${WIND_NAMES[code]} Wind`;
  if (code in DRAGONS) return `${DRAGONS[code]} Dragon`;
  const n = Number(code[0]);
  switch (code[1]) {
    case 'B': case 'C': case 'D': return `${n} ${SUITS[code[1]]}`;
    case 'F': return `${FLOWERS[n - 1]} (flower ${n})`;
    case 'S': return `${SEASONS[n - 1]} (season ${n})`;
    case 'A': return `${ANIMALS[n - 1]} (animal)`;
    default: return code;
  }
}

/** The Unicode Mahjong Tiles character for the tile ('' for animals, which Unicode lacks). */
export function tileChar(code) {
  if (code == null) return '\u{1F02B}';
  const n = Number(code[0]);
  const base = { C: 0x1f007, B: 0x1f010, D: 0x1f019 }[code[1]];
  if (base && n >= 1 && n <= 9) return String.fromCodePoint(base + n - 1);
  const single = {
    EW: 0x1f000, SW: 0x1f001, WW: 0x1f002, NW: 0x1f003, RD: 0x1f004, GD: 0x1f005, WD: 0x1f006,
    '1F': 0x1f022, '2F': 0x1f023, '3F': 0x1f025, '4F': 0x1f024,
    '1S': 0x1f026, '2S': 0x1f027, '3S': 0x1f028, '4S': 0x1f029,
  }[code];
  return single ? String.fromCodePoint(single) : '';
}

/** Is the tile a flower, season or animal (set aside when drawn)? */
export function isBonus(code) {
  return code != null && 'FSA'.includes(code[1]);
}

/** Is the tile a suit tile (bamboo, characters, circles)? */
export function isSuit(code) {
  return code != null && /^[1-9][BCD]$/.test(code);
}

// xmj's order: Bamboos, Characters, Circles, Winds, Dragons, Flowers, Seasons (then animals).
const WIND_ORDER = ['EW', 'SW', 'WW', 'NW'];
const DRAGON_ORDER = ['RD', 'WD', 'GD'];

/** A number that sorts tiles in xmj's order. */
export function tileRank(code) {
  if (code == null) return 1000;
  if (/^[1-9][BCD]$/.test(code)) return { B: 0, C: 10, D: 20 }[code[1]] + Number(code[0]);
  if (WIND_ORDER.includes(code)) return 30 + WIND_ORDER.indexOf(code);
  if (DRAGON_ORDER.includes(code)) return 40 + DRAGON_ORDER.indexOf(code);
  return { F: 50, S: 60, A: 70 }[code[1]] + Number(code[0]);
}

/** The tiles sorted in xmj's order (a new array). */
export function sortTiles(tiles) {
  return [...tiles].sort((a, b) => tileRank(a) - tileRank(b));
}

/** The tile `steps` after `code` in its suit (for chows), or null. */
export function nextInSuit(code, steps = 1) {
  if (!/^[1-9][BCD]$/.test(code)) return null;
  const n = Number(code[0]) + steps;
  return n >= 1 && n <= 9 ? `${n}${code[1]}` : null;
}

/** Every tile code, in xmj's order (the calculator's palette). */
export const ALL_TILES = [
  ...['B', 'C', 'D'].flatMap((s) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `${n}${s}`)),
  ...WIND_ORDER, ...DRAGON_ORDER,
  '1F', '2F', '3F', '4F', '1S', '2S', '3S', '4S', '1A', '2A', '3A', '4A',
];

// ---- Pictures ---------------------------------------------------------------

// The face is 60 x 80 units; pips are drawn in the box (8, 14) - (52, 74).
const PIP_LAYOUTS = {
  1: [[30, 44]],
  2: [[30, 28], [30, 60]],
  3: [[16, 24], [30, 44], [44, 64]],
  4: [[18, 28], [42, 28], [18, 60], [42, 60]],
  5: [[18, 26], [42, 26], [30, 44], [18, 62], [42, 62]],
  6: [[18, 24], [42, 24], [18, 44], [42, 44], [18, 64], [42, 64]],
  7: [[14, 22], [30, 28], [46, 34], [18, 50], [42, 50], [18, 66], [42, 66]],
  8: [[18, 22], [42, 22], [18, 37], [42, 37], [18, 52], [42, 52], [18, 67], [42, 67]],
  9: [[14, 24], [30, 24], [46, 24], [14, 44], [30, 44], [46, 44], [14, 64], [30, 64], [46, 64]],
};

const INK = { red: '#b3261e', green: '#1b7a3a', blue: '#1f4e9c', black: '#222' };

function circlePips(n) {
  const r = n === 1 ? 14 : n <= 4 ? 8.5 : n <= 6 ? 7.5 : 6.5;
  return PIP_LAYOUTS[n].map(([x, y], i) => {
    const colour = n === 1 ? INK.red : (n === 5 && i === 2) || (n === 7 && i < 3) ? INK.red : i % 2 ? INK.green : INK.blue;
    return `<circle cx="${x}" cy="${y}" r="${r}" fill="none" stroke="${colour}" stroke-width="2.4"/>` +
      `<circle cx="${x}" cy="${y}" r="${r / 3}" fill="${colour}"/>`;
  }).join('');
}

function bambooPips(n) {
  if (n === 1) {
    // The one of bamboo: a single tall stalk with leaves, in red and green.
    return `<rect x="26" y="18" width="8" height="52" rx="4" fill="${INK.green}"/>` +
      `<path d="M30 30 q-14 -6 -16 -16 q12 2 16 12 M30 46 q14 -6 16 -16 q-12 2 -16 12" fill="${INK.green}"/>` +
      `<circle cx="30" cy="18" r="6" fill="${INK.red}"/>`;
  }
  const h = n <= 4 ? 22 : n <= 6 ? 16 : 13;
  return PIP_LAYOUTS[n].map(([x, y], i) => {
    const colour = (n === 5 && i === 2) || (n === 9 && i % 3 === 1) || (n === 7 && i === 0) ? INK.red : INK.green;
    return `<rect x="${x - 3}" y="${y - h / 2}" width="6" height="${h}" rx="3" fill="${colour}"/>` +
      `<line x1="${x - 3}" x2="${x + 3}" y1="${y}" y2="${y}" stroke="#f5f0e0" stroke-width="1.2"/>`;
  }).join('');
}

function characterFace(n) {
  // A bar count for the number over a red mark for "ten thousand": drawn, not typed.
  const bars = [];
  const rows = n <= 3 ? n : n <= 6 ? n - 3 : n - 6;
  for (let i = 0; i < rows; i++) bars.push(`<rect x="16" y="${18 + i * 7}" width="28" height="4" rx="2" fill="${INK.blue}"/>`);
  const band = n > 3 ? `<rect x="${n > 6 ? 12 : 20}" y="14" width="${n > 6 ? 36 : 20}" height="26" rx="5" fill="none" stroke="${INK.blue}" stroke-width="2"/>` : '';
  const mark = `<path d="M18 50 h24 M30 46 v24 M20 58 h20 M22 66 q8 6 16 0" stroke="${INK.red}" stroke-width="3.5" fill="none" stroke-linecap="round"/>`;
  return bars.join('') + band + mark;
}

function letterFace(letter, colour, size = 34) {
  return `<text x="30" y="${44 + size * 0.35}" text-anchor="middle" font-family="Georgia, 'DejaVu Serif', serif" font-weight="700" font-size="${size}" fill="${colour}">${letter}</text>`;
}

function windFace(code) {
  const arrow = { EW: 0, SW: 90, WW: 180, NW: 270 }[code];
  return letterFace(code[0], INK.black, 32) +
    `<g transform="rotate(${arrow} 30 66)"><path d="M22 66 h14 m-5 -4 l5 4 l-5 4" stroke="${INK.blue}" stroke-width="2.5" fill="none"/></g>`;
}

function dragonFace(code) {
  if (code === 'WD') {
    return `<rect x="13" y="18" width="34" height="52" rx="3" fill="none" stroke="${INK.blue}" stroke-width="3"/>` +
      `<rect x="19" y="24" width="22" height="40" rx="2" fill="none" stroke="${INK.blue}" stroke-width="1.5"/>`;
  }
  const colour = code === 'RD' ? INK.red : INK.green;
  return `<circle cx="30" cy="44" r="20" fill="none" stroke="${colour}" stroke-width="3"/>` + letterFace(code[0], colour, 26);
}

function bonusFace(code) {
  const n = Number(code[0]);
  const kind = code[1];
  const colour = kind === 'F' ? INK.red : kind === 'S' ? INK.green : INK.blue;
  let picture;
  if (kind === 'F') {
    // Five petals round a heart.
    picture = [0, 72, 144, 216, 288].map((a) =>
      `<ellipse cx="30" cy="32" rx="6" ry="11" fill="${colour}" opacity="0.85" transform="rotate(${a} 30 43)"/>`).join('') +
      `<circle cx="30" cy="43" r="5" fill="#e0a800"/>`;
  } else if (kind === 'S') {
    // A sun with rays.
    picture = `<circle cx="30" cy="43" r="9" fill="${colour}"/>` + [0, 45, 90, 135, 180, 225, 270, 315].map((a) =>
      `<line x1="30" y1="26" x2="30" y2="20" stroke="${colour}" stroke-width="3" stroke-linecap="round" transform="rotate(${a} 30 43)"/>`).join('');
  } else {
    picture = `<ellipse cx="30" cy="46" rx="14" ry="10" fill="${colour}"/><circle cx="40" cy="34" r="6" fill="${colour}"/>`;
  }
  return picture + `<text x="30" y="74" text-anchor="middle" font-family="sans-serif" font-size="11" fill="${INK.black}">${[FLOWERS, SEASONS, ANIMALS][['F', 'S', 'A'].indexOf(kind)][n - 1]}</text>`;
}

function faceOf(code) {
  if (/^[1-9]D$/.test(code)) return circlePips(Number(code[0]));
  if (/^[1-9]B$/.test(code)) return bambooPips(Number(code[0]));
  if (/^[1-9]C$/.test(code)) return characterFace(Number(code[0]));
  if (code in WIND_NAMES) return windFace(code);
  if (code in DRAGONS) return dragonFace(code);
  return bonusFace(code);
}

/** The small corner index: the number and suit letter, or the honour's letter. */
function indexOf(code) {
  if (/^[1-9][BCD]$/.test(code)) return code;
  if (code in WIND_NAMES || code in DRAGONS) return code[0];
  return code;
}

const faces = new Map();

/**
 * The SVG markup of a tile's face (`null`: its back). The markup is the
 * picture only; `tileElement` wraps it with its label.
 */
export function tileSvg(code) {
  const key = code ?? 'back';
  if (!faces.has(key)) {
    const body = code == null
      ? `<rect x="1" y="1" width="58" height="78" rx="7" fill="#2e6b4f" stroke="#1d4634" stroke-width="2"/>` +
        `<rect x="7" y="7" width="46" height="66" rx="4" fill="none" stroke="#9cc9b0" stroke-width="1.5"/>`
      : `<rect x="1" y="1" width="58" height="78" rx="7" fill="#fbf7ea" stroke="#8a8170" stroke-width="2"/>` +
        faceOf(code) +
        `<text x="5" y="11" font-family="sans-serif" font-size="9" font-weight="700" fill="#555">${indexOf(code)}</text>`;
    faces.set(key, `<svg viewBox="0 0 60 80" xmlns="http://www.w3.org/2000/svg" aria-hidden="true" focusable="false">${body}</svg>`);
  }
  return faces.get(key);
}

/**
 * A tile as a DOM element: its picture, its name as the accessible label and
 * tooltip (the tiletip), and its code in `data-tile` (absent for a hidden tile).
 */
const parsed = new Map();

export function tileElement(code, { tag = 'span', small = false } = {}) {
  const el = document.createElement(tag);
  el.className = small ? 'tile small' : 'tile';
  // Each picture is parsed once, then cloned: a redraw of the table costs no parsing.
  const key = code ?? 'back';
  if (!parsed.has(key)) {
    const holder = document.createElement('span');
    holder.innerHTML = tileSvg(code);
    parsed.set(key, holder.firstChild);
  }
  el.append(parsed.get(key).cloneNode(true));
  const name = tileName(code);
  const ch = code == null ? '' : tileChar(code);
  el.setAttribute('role', tag === 'button' ? 'button' : 'img');
  el.setAttribute('aria-label', name);
  el.title = ch ? `${name} ${ch}` : name;
  if (code != null) el.dataset.tile = code;
  else el.classList.add('back');
  return el;
}
