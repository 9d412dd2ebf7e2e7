// Replays a recorded WebSocket stream (a JSON array of the messages' texts,
// written by tests/client_state.rs) through the client's state logic and
// checks its picture against every snapshot the server sent in the stream.
// Run by `cargo test --test client_state`; prints "N snapshots matched".

import { readFileSync } from 'node:fs';
import { fromSnapshot, applyEvent } from '../../crates/server/src/web/js/state.js';

const file = process.argv[2];
const stream = JSON.parse(readFileSync(file, 'utf8')).map((t) => JSON.parse(t));

const sorted = (tiles) => (tiles == null ? null : [...tiles].sort());

/** The parts of a state a player sees on the table, in a comparable shape. */
function picture(table, game, seat) {
  const hand = game?.hand;
  return {
    table: {
      state: table.state,
      seats: table.seats.map((s) => ({ name: s.name, robot: !!s.robot })),
      manager: table.manager,
      scores: table.scores,
      hands: table.hands,
      waiting_for_ready: table.waiting_for_ready,
      paused: table.paused,
    },
    game: game && {
      scores: game.scores,
      round: game.round,
      hands_started: game.hands_started,
      game_over: game.game_over,
      hand: hand && {
        number: hand.number,
        east: hand.east,
        phase: hand.phase,
        to_act: hand.to_act,
        live_tiles_left: hand.live_tiles_left,
        discards: hand.discards,
        claimable: hand.claimable,
        pending_discard: hand.pending_discard,
        winning_tile: hand.winning_tile,
        outcome: hand.outcome,
        my_answer: seat == null ? null : hand.my_answer,
        seats: hand.seats.map((s) => ({
          player: s.player, wind: s.wind, concealed: sorted(s.concealed), concealed_count: s.concealed_count,
          sets: s.sets, bonus: s.bonus, calling: s.calling, score: s.score,
        })),
      },
    },
  };
}

function diff(a, b, path = '') {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a)) {
    return Object.keys({ ...a, ...b }).flatMap((k) => diff(a[k], b[k], `${path}.${k}`));
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((x, i) => diff(x, b[i], `${path}[${i}]`));
  }
  return [`${path}: client ${JSON.stringify(a)} / server ${JSON.stringify(b)}`];
}

let state = null;
let matched = 0;
let lastEvent = null;
const failures = [];
for (const msg of stream) {
  if (msg.type === 'snapshot') {
    if (state && !state.stale) {
      const d = diff(picture(state.table, state.game, state.seat), picture(msg.table, msg.game, msg.seat));
      if (d.length) failures.push(`after event ${state.seq} (${lastEvent}):\n  ${d.slice(0, 12).join('\n  ')}`);
      else matched += 1;
    }
    const chat = state?.chat;
    state = fromSnapshot(msg);
    if (chat) state.chat = chat;
  } else if (msg.type === 'event' && state) {
    applyEvent(state, msg);
    lastEvent = msg.event.type;
  }
}
if (failures.length) {
  console.error(`${failures.length} snapshot(s) differ (${matched} matched):\n${failures.slice(0, 8).join('\n')}`);
  process.exit(1);
}
if (matched < 5) {
  console.error(`only ${matched} snapshots compared: the stream is too short to tell`);
  process.exit(1);
}
console.log(`${matched} snapshots matched`);
