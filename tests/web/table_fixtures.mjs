// Small hand-made table states and prompts for the table screen's module
// tests (claim_panel, table_setup, table_bar, my_hand, score_window): shaped
// as state.js's fromSnapshot makes them and as docs/protocol.md's prompt is.

/** The players' names at the table, seat by seat. */
export const NAMES = ['Ann', 'Bo', 'Cy', 'Di'];

/**
 * A table state seen from `seat` (null: a spectator); `table`, `game` and
 * `hand` fields override the defaults (a game in play, hand 1, nobody waiting).
 */
export function tableState({ seat = 0, table = {}, game = {}, hand = {} } = {}) {
  return {
    seat,
    seq: 10,
    stale: false,
    chat: [],
    options: {},
    table: {
      id: 't1', name: 'Evening game', state: 'playing', manager: 0, spectators: 0, preset: 'chinese-classical',
      seats: NAMES.map((name, s) => ({ seat: s, name, connected: true, ready: true })),
      scores: [1000, 1000, 1000, 1000], hands: 0, pause_deciseconds: 0, waiting_for_ready: [], paused: false, seq: 10,
      ...table,
    },
    game: hand === null ? { round: 'East', hands_started: 0, game_over: false, hand: null, ...game } : {
      round: 'East', hands_started: 1, game_over: false, scores: [1000, 1000, 1000, 1000],
      ...game,
      hand: {
        number: 1, phase: 'discarding', to_act: 0, live_tiles_left: 80, dead_tiles_left: 16, discards: [],
        claimable: null, pending_discard: null, my_answer: null, outcome: null, swap: null,
        seats: [0, 1, 2, 3].map((p) => ({ player: p, sets: [], bonus: [], concealed: null, concealed_count: 13, score: null })),
        ...hand,
      },
    },
  };
}

/** A prompt of `decision` listing `actions`. */
export function prompt(decision, actions = [], more = {}) {
  return { type: 'prompt', seq: 10, decision, actions, ready: false, drawn: null, deadline: null, claimable: null, ...more };
}
