// The scoring window: after a hand, every player's hand and score breakdown
// (itemised, and the reference's text), the settlement (who pays whom), and
// the cumulative scores; after the last hand, the final standings.

import { h } from './dom.js';
import { tileElement, sortTiles, WINDS } from './tiles.js';
import { setTiles, setConcealed, winnersOf, seatOf } from './state.js';
import { scoringAnchor } from './help.js';


/** A player's name at the table. */
export function nameOf(table, p) {
  return table.seats[p]?.name ?? `Seat ${p + 1}`;
}

/** A hand's tiles as small pictures: its sets, then its concealed tiles, then its bonus tiles. */
export function handTiles(seat, { showConcealed = true } = {}) {
  const parts = seat.sets.map((set) => h('span', { class: `set${setConcealed(set) ? ' concealed' : ''}` },
    setTiles(set).map((t) => tileElement(t, { small: true }))));
  if (showConcealed && seat.concealed?.length) {
    parts.push(h('span', { class: 'set' }, sortTiles(seat.concealed).map((t) => tileElement(t, { small: true }))));
  }
  if (seat.bonus.length) parts.push(h('span', { class: 'set' }, seat.bonus.map((t) => tileElement(t, { small: true }))));
  return h('div', { class: 'hand' }, parts);
}

/** The body of the scoring window for the state's current (finished or scoring) hand. */
export function scoringBody(state) {
  const { table, game } = state;
  const hand = game?.hand;
  if (!hand) return h('p', {}, 'No hand has been scored yet.');
  const winners = winnersOf(hand).length ? winnersOf(hand) : (hand.winners ?? []);
  const settlement = hand.outcome && hand.outcome !== 'wash_out' ? hand.outcome.won.settlement : null;
  const parts = [];
  if (hand.outcome === 'wash_out') parts.push(h('p', { class: 'card' }, 'The hand was washed out: nobody scores.'));
  else if (winners.length) parts.push(h('p', {}, h('strong', {}, winners.map((w) => nameOf(table, w)).join(' and ')), ' went Mah-Jong',
    hand.winning_tile ? [' with ', tileElement(hand.winning_tile, { small: true })] : null, '.'));

  if (settlement) {
    parts.push(h('section', { class: 'card', 'aria-label': 'Settlement' },
      h('h3', {}, 'Settlement'),
      h('table', { class: 'data' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Player'), h('th', { class: 'num' }, 'This hand'), h('th', { class: 'num' }, 'Total'))),
        h('tbody', {}, [0, 1, 2, 3].map((p) => {
          const wind = seatOf(hand, p)?.wind;
          const delta = settlement.deltas[WINDS.indexOf(wind)];
          return h('tr', {}, h('td', {}, `${nameOf(table, p)} (${wind})`),
            h('td', { class: 'num' }, delta > 0 ? `+${delta}` : `${delta}`), h('td', { class: 'num' }, game.scores[p]));
        }))),
      h('details', {}, h('summary', {}, 'Who pays whom'), h('pre', { class: 'lines' }, settlement.lines.join('\n')))));
  } else {
    parts.push(h('p', {}, 'Scores: ', [0, 1, 2, 3].map((p) => `${nameOf(table, p)} ${game.scores[p]}`).join(' · ')));
  }
  parts.push(h('div', { class: 'score-grid' }, [...hand.seats].sort((a, b) => winners.includes(b.player) - winners.includes(a.player)).map((seat) => {
    const s = seat.score;
    return h('section', { class: `score-card${winners.includes(seat.player) ? ' winner' : ''}`, 'aria-label': `${nameOf(table, seat.player)}'s hand` },
      h('h3', {}, `${nameOf(table, seat.player)} `, h('span', { class: 'muted' }, `(${seat.wind})`),
        s ? h('span', { style: 'float:right' }, `${s.score}`) : null),
      handTiles(seat),
      s ? [
        h('table', { class: 'data' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Item'), h('th', { class: 'num' }, 'Points'), h('th', { class: 'num' }, 'Doubles'))),
          h('tbody', {}, s.items.map((it) => h('tr', {}, h('td', {}, itemLink(it.name), it.set ? [' ', setTiles(it.set).slice(0, 1).map((t) => tileElement(t, { small: true }))] : null),
            h('td', { class: 'num' }, it.points || ''), h('td', { class: 'num' }, it.doubles || '')))),
          h('tfoot', {}, h('tr', {}, h('th', {}, 'Score'), h('th', { class: 'num' }, s.points), h('th', { class: 'num' }, s.doubles)))),
        h('details', {}, h('summary', {}, 'As the reference prints it'), h('pre', { class: 'lines' }, s.lines.join('\n'))),
      ] : h('p', { class: 'muted' }, 'Not scored yet.'));
  })));

  if (game.game_over) parts.unshift(finalStandings(state));
  return h('div', {}, parts);
}

/**
 * A scoring item's name as a link to its entry on the rules page, in a new
 * tab so that the game stays open.
 */
function itemLink(name) {
  return h('a', { href: `#/help/${scoringAnchor(name)}`, target: '_blank', rel: 'noopener', title: 'What is this? (the rules, in a new tab)' }, name);
}

/** The final standings: players by their final score. */
export function finalStandings(state) {
  const { table, game } = state;
  const order = [0, 1, 2, 3].sort((a, b) => game.scores[b] - game.scores[a]);
  return h('section', { class: 'card', 'aria-label': 'Final standings' },
    h('h3', {}, 'Final standings'),
    h('ol', {}, order.map((p) => h('li', {}, h('strong', {}, nameOf(table, p)), ` ${game.scores[p]}`))));
}
