// The table as a client sees it, kept current from the server's stream.
//
// A `snapshot` gives the whole picture (docs/protocol.md, "The snapshot");
// each `event` then changes it as the server's own view would change. Where an
// event's effect cannot be worked out from what the client sees (the options
// when the game starts, East's tile swap), the state is marked `stale` and the
// connection asks the server for a fresh snapshot. Everything here is pure
// data: no DOM, so `node --test` checks it against recorded games.

import { nextInSuit, WINDS } from './tiles.js';

/** Chat lines a state keeps (the oldest go first). */
export const CHAT_LINES = 200;

/** The state's entry for a `chat` event sent at `at_us`. */
export function chatEntry(e, atUs) {
  return { seat: e.seat, name: e.name, text: e.text, at_us: atUs };
}

/** A fresh state from a `snapshot` message. */
export function fromSnapshot(msg) {
  return {
    seat: msg.seat,
    table: structuredClone(msg.table),
    game: structuredClone(msg.game),
    seq: msg.table.seq,
    stale: false,
    chat: [],
    // The options in force by catalogue name (older servers send none).
    options: structuredClone(msg.options ?? {}),
  };
}

/** The seat view (SeatView) of player `p` in the current hand. */
export function seatOf(hand, p) {
  return hand.seats.find((s) => s.player === p);
}

/** The wind of player `p` when `east` is East. */
export function windOf(p, east) {
  return WINDS[(p - east + 4) % 4];
}

/** Takes `tiles` out of a seat's concealed hand (or only counts them, when hidden). */
function takeTiles(seat, tiles) {
  const held = seat.concealed_count;
  seat.concealed_count = Math.max(0, held - tiles.length);
  // A hand wholly laid out in sets (after a Mah-Jong) hides nothing more.
  if (seat.concealed == null && held > 0 && seat.concealed_count === 0) seat.concealed = [];
  if (seat.concealed == null) return true;
  for (const t of tiles) {
    const i = seat.concealed.indexOf(t);
    if (i < 0) return false;
    seat.concealed.splice(i, 1);
  }
  return true;
}

/** The tiles a set is made of. */
export function setTiles(set) {
  const kind = typeof set.kind === 'string' ? set.kind : 'kong';
  const t = set.tile;
  if (kind.endsWith('chow')) return [t, nextInSuit(t, 1), nextInSuit(t, 2)];
  if (kind.endsWith('pung')) return [t, t, t];
  if (kind.endsWith('pair')) return [t, t];
  return [t, t, t, t];
}

/** Is the set concealed (declared from the hand, not claimed)? */
export function setConcealed(set) {
  return typeof set.kind === 'string' && set.kind.startsWith('closed_');
}

/** The lowest tile of a chow made with `tile` at `position`. */
export function chowLow(tile, position) {
  return nextInSuit(tile, { Lower: 0, Middle: -1, Upper: -2 }[position]) ?? tile;
}

/** Removes the claimed discard from the table's discards. */
function takeClaimed(hand, tile) {
  if (hand.claimable && hand.claimable.tile === tile) {
    const from = hand.claimable.from;
    for (let i = hand.discards.length - 1; i >= 0; i--) {
      if (hand.discards[i][0] === from && hand.discards[i][1] === tile) {
        hand.discards.splice(i, 1);
        break;
      }
    }
    hand.claimable = null;
    return;
  }
  if (hand.pending_discard === tile) hand.pending_discard = null;
}

/** A set made with a claimed tile: the seat gives up the rest from its hand. */
function claimSet(state, hand, player, tile, set) {
  const seat = seatOf(hand, player);
  const rest = setTiles(set);
  rest.splice(rest.indexOf(tile), 1);
  takeClaimed(hand, tile);
  if (!takeTiles(seat, rest)) state.stale = true;
  seat.sets.push(set);
  hand.to_act = player;
  hand.whence = 'discard';
  if (hand.phase !== 'mah_jonging') hand.phase = 'discarding';
  hand.my_answer = null;
}

/** Closed-set kinds as the server writes them in `sets`. */
function closedSet(set) {
  if (set === 'special_set') return null;
  const [kind, tile] = Object.entries(set)[0];
  return { kind: `closed_${kind}`, tile };
}

/**
 * Applies one `event` message to the state (in place) and returns the state.
 * Events at or below the state's `seq` (already seen) are ignored.
 */
export function applyEvent(state, msg) {
  if (msg.seq <= state.seq) return state;
  state.seq = msg.seq;
  const e = msg.event;
  const table = state.table;
  const game = state.game;
  const hand = game?.hand;
  const viewer = state.seat;
  switch (e.type) {
    // ---- table events
    case 'seat_taken':
      table.seats[e.seat] = { seat: e.seat, name: e.name, ...(e.robot ? { robot: e.robot } : {}), connected: !!e.robot || e.seat === viewer, ready: !!e.robot };
      break;
    case 'seat_left':
      table.seats[e.seat] = { seat: e.seat, name: null, connected: false, ready: false };
      break;
    case 'disconnected':
    case 'connected':
    case 'reconnected':
      if (table.seats[e.seat]) table.seats[e.seat].connected = e.type !== 'disconnected';
      break;
    case 'manager':
      table.manager = e.seat;
      break;
    case 'option_changed':
      // The value as an option file writes it ("1", "20", "up"); the game's
      // own view of its options comes with a fresh snapshot.
      if (state.options) state.options[e.name] = /^-?\d+$/.test(e.value) ? Number(e.value) : e.value;
      if (game) state.stale = true;
      break;
    case 'game_started':
      table.state = 'playing';
      state.stale = true; // the game's options and view come with a snapshot
      break;
    case 'waiting_for_ready':
      table.waiting_for_ready = e.seats;
      for (const s of table.seats) if (!s.robot) s.ready = !e.seats.includes(s.seat);
      break;
    case 'paused':
      table.paused = true;
      break;
    case 'resumed':
      table.paused = false;
      table.waiting_for_ready = [];
      break;
    case 'pause_changed':
      table.pause_deciseconds = e.deciseconds;
      break;
    case 'chat':
      state.chat.push(chatEntry(e, msg.at_us));
      if (state.chat.length > CHAT_LINES) state.chat.shift();
      break;
    case 'penalty':
      break;

    // ---- game events
    case 'hand_started': {
      if (!game) { state.stale = true; break; }
      game.round = e.round;
      game.hands_started = e.hand;
      table.hands = e.hand;
      table.waiting_for_ready = [];
      table.paused = false;
      for (const s of table.seats) if (!s.robot) s.ready = true;
      game.hand = {
        number: e.hand, extra_hands: e.extra_hands, dice: e.dice, phase: 'declaring', east: e.east, to_act: e.east,
        whence: 'nowhere',
        seats: [0, 1, 2, 3].map((i) => {
          const p = (e.east + i) % 4;
          return { player: p, wind: windOf(p, e.east), concealed: p === viewer || state.omniscient ? [] : null, concealed_count: 0, sets: [], bonus: [], calling: false, score: null };
        }),
        live_tiles_left: hand?.live_tiles_left ?? 0, dead_tiles_left: hand?.dead_tiles_left ?? 0,
        discards: [], claimable: null, pending_discard: null, drawn: null, winning_tile: null,
        minimum_doubles: hand?.minimum_doubles ?? 0, my_answer: null, my_decision: null, swap: null, outcome: null,
      };
      break;
    }
    case 'drew': {
      if (!hand) { state.stale = true; break; }
      const seat = seatOf(hand, e.player);
      seat.concealed_count += 1;
      if (seat.concealed != null) {
        if (e.tile == null) state.stale = true;
        else seat.concealed.push(e.tile);
      }
      hand.live_tiles_left = e.live_tiles_left;
      if (e.loose) hand.dead_tiles_left = Math.max(0, hand.dead_tiles_left - 1);
      hand.whence = e.loose ? 'loose' : 'wall';
      hand.to_act = e.player;
      // The deal is over when East holds fourteen: from then on a draw is a turn's.
      if (hand.phase !== 'declaring' || e.loose) hand.drawn = e.player === viewer ? e.tile : hand.drawn;
      if (hand.phase === 'discarded') hand.phase = 'discarding';
      // A draw closes whatever was open to claims: a discard nobody took, or
      // a kong nobody robbed (its declarer draws the loose tile).
      hand.claimable = null;
      hand.my_answer = null;
      break;
    }
    case 'declared_bonus': {
      const seat = seatOf(hand, e.player);
      if (!takeTiles(seat, [e.tile])) state.stale = true;
      seat.bonus.push(e.tile);
      hand.to_act = e.player;
      break;
    }
    case 'finished_declaring':
      hand.to_act = (e.player + 1) % 4;
      break;
    case 'play_started':
      hand.phase = 'discarding';
      hand.to_act = e.east;
      break;
    case 'swap_started':
    case 'swap_chosen':
    case 'tile_passed':
    case 'lot_passed':
    case 'tile_received':
      // East's tile swap moves tiles the viewer cannot follow: ask for the picture.
      state.stale = true;
      break;
    case 'discarded': {
      const seat = seatOf(hand, e.player);
      if (!takeTiles(seat, [e.tile])) state.stale = true;
      if (e.calling) seat.calling = true;
      hand.discards.push([e.player, e.tile]);
      hand.claimable = { tile: e.tile, discard: e.discard, from: e.player, kong: null };
      hand.phase = 'discarded';
      hand.to_act = e.player;
      hand.drawn = null;
      hand.my_answer = viewer != null && viewer !== e.player ? 'waiting' : null;
      break;
    }
    case 'passed':
      if (e.player === viewer) hand.my_answer = 'no_claim';
      break;
    case 'claimed':
      if (e.player === viewer) hand.my_answer = { claim: e.claim };
      break;
    case 'claim_denied':
    case 'chow_position_needed':
    case 'dangerous_discard':
      break;
    case 'chowed':
      claimSet(state, hand, e.player, e.tile, { kind: 'chow', tile: chowLow(e.tile, e.position) });
      break;
    case 'punged':
      claimSet(state, hand, e.player, e.tile, { kind: 'pung', tile: e.tile });
      break;
    case 'konged':
      claimSet(state, hand, e.player, e.tile, { kind: { kong: { annexed: false } }, tile: e.tile });
      break;
    case 'paired':
      claimSet(state, hand, e.player, e.tile, { kind: 'pair', tile: e.tile });
      break;
    case 'declared_closed_kong': {
      const seat = seatOf(hand, e.player);
      if (!takeTiles(seat, [e.tile, e.tile, e.tile, e.tile])) state.stale = true;
      seat.sets.push({ kind: 'closed_kong', tile: e.tile });
      hand.claimable = { tile: e.tile, discard: e.discard, from: e.player, kong: 'declaring_kong' };
      hand.to_act = e.player;
      hand.drawn = null;
      hand.my_answer = viewer != null && viewer !== e.player ? 'waiting' : null;
      break;
    }
    case 'added_to_pung': {
      const seat = seatOf(hand, e.player);
      if (!takeTiles(seat, [e.tile])) state.stale = true;
      const pung = seat.sets.find((s) => s.kind === 'pung' && s.tile === e.tile);
      if (pung) pung.kind = { kong: { annexed: true } };
      else state.stale = true;
      hand.claimable = { tile: e.tile, discard: e.discard, from: e.player, kong: 'adding_to_pung' };
      hand.to_act = e.player;
      hand.drawn = null;
      hand.my_answer = viewer != null && viewer !== e.player ? 'waiting' : null;
      break;
    }
    case 'robbed_kong': {
      const robbed = hand.claimable && seatOf(hand, hand.claimable.from);
      if (robbed) {
        const set = robbed.sets.find((s) => s.tile === e.tile && typeof s.kind === 'object');
        if (set) set.kind = 'pung';
        else state.stale = true;
      }
      hand.claimable = null;
      hand.pending_discard = e.tile;
      hand.winning_tile = e.tile;
      hand.phase = 'mah_jonging';
      hand.to_act = e.player;
      hand.whence = 'robbed_kong';
      hand.my_answer = null;
      (hand.winners ??= []).push(e.player);
      break;
    }
    case 'mah_jong': {
      if (e.tile == null && hand.claimable) {
        const tile = hand.claimable.tile;
        takeClaimed(hand, tile);
        hand.pending_discard = tile;
        hand.winning_tile = tile;
        hand.whence = 'discard';
      } else if (e.tile != null) {
        hand.winning_tile = e.tile;
      }
      hand.phase = 'mah_jonging';
      hand.to_act = e.player;
      hand.drawn = null;
      hand.my_answer = null;
      (hand.winners ??= []).push(e.player);
      break;
    }
    case 'declared_special_set': {
      const seat = seatOf(hand, e.player);
      seat.concealed = [...e.tiles];
      seat.concealed_count = e.tiles.length;
      hand.pending_discard = null;
      state.stale = true; // how the server lays out a special hand is its own
      break;
    }
    case 'formed_closed_set': {
      const seat = seatOf(hand, e.player);
      const set = typeof e.set.kind === 'string' && e.set.kind.startsWith('closed_') ? e.set : closedSet(e.set);
      if (set) {
        if (!takeTiles(seat, setTiles(set))) state.stale = true;
        seat.sets.push(set);
      }
      break;
    }
    case 'showed_tiles': {
      const seat = seatOf(hand, e.player);
      seat.concealed = [...e.tiles];
      seat.concealed_count = e.tiles.length;
      break;
    }
    case 'hand_scored':
      seatOf(hand, e.player).score = e.score;
      break;
    case 'settled': {
      game.scores = e.scores;
      table.scores = e.scores;
      const winners = hand.winners ?? winnersPaid(hand, e.settlement);
      hand.outcome = { won: { winner: winners[0] ?? null, winners, settlement: e.settlement } };
      hand.phase = 'finished';
      hand.claimable = null;
      hand.drawn = null;
      hand.my_answer = null;
      break;
    }
    case 'washed_out':
      hand.outcome = 'wash_out';
      hand.phase = 'finished';
      hand.claimable = null;
      hand.drawn = null;
      hand.my_answer = null;
      break;
    case 'game_over':
      if (game) { game.game_over = true; game.scores = e.scores; }
      table.state = 'over';
      table.scores = e.scores;
      break;
    default:
      state.stale = true;
  }
  return state;
}

/**
 * The winners of a settled hand, from its payments (a state made from a
 * snapshot taken after the Mah-Jong did not see who went out).
 */
function winnersPaid(hand, settlement) {
  const byWind = Object.fromEntries(hand.seats.map((s) => [s.wind, s.player]));
  const paid = settlement.payments.filter((p) => p.kind === 'winner').map((p) => byWind[p.to]);
  const winners = [...new Set(paid)];
  return winners.length ? winners : [hand.to_act];
}

/** The winners of the current or last hand (from its outcome). */
export function winnersOf(hand) {
  if (!hand?.outcome || hand.outcome === 'wash_out') return [];
  return hand.outcome.won.winners ?? [hand.outcome.won.winner];
}

const CLAIM_WORDS = { pung: 'Pung!', kong: 'Kong!', mah_jong: 'Mah Jong!' };

/** The word a claim is announced with ("Chow!", "Pung!", ...). */
export function claimWord(claim) {
  return typeof claim === 'object' && claim && 'chow' in claim ? 'Chow!' : CLAIM_WORDS[claim] ?? String(claim);
}
