// The table screen, laid out as xmj lays it out: four players round the
// table with us at the bottom, our concealed tiles sorted (and re-arrangeable),
// the others' face down, everyone's exposed sets and bonus tiles, the discards
// in the middle with the latest highlighted, the wall's count, East's marker and
// the prevailing wind. What we may do comes from the server's prompts alone:
// a button is offered only when its move is listed.
//
// This module keeps the screen's life (the socket's messages, the state,
// redrawing once per frame) and draws the felt: the players and our hand.
// The parts around it are modules of their own, each given the screen:
// my_hand.js our own tiles (arranged, selected, discarded), claim_panel.js
// the moves on offer, score_window.js the scoring window, table_bar.js the
// bar and its settings, table_setup.js the seats and options before the
// game, table_keys.js the keyboard, narration.js the log's and the
// announcer's words, table_api.js the REST calls.

import { guestSeats } from './api.js';
import { h, fill, announce, toast } from './dom.js';
import { TableConnection } from './connection.js';
import { fromSnapshot, applyEvent, seatOf, setTiles, setConcealed, CHAT_LINES } from './state.js';
import { tileElement, tileName, sortTiles } from './tiles.js';
import { play } from './sound.js';
import { viewSetting, moving, onePool, everyDiscard } from './table_settings.js';
import {
  LOG_LINES, REPLAY_SHOUTS, whoIs, eventSentence, logLine, announced, shoutFor, appendLog, historyLines, closedText, logKey, logContent,
} from './narration.js';
import { renderActions } from './claim_panel.js';
import { renderBar, renderHints, claimPromptsMessage } from './table_bar.js';
import { renderSetup, acceptInvitation } from './table_setup.js';
import { onTableKey } from './table_keys.js';
import { renderMyHand, discardSelected } from './my_hand.js';
import { openScores, showScoresWhenDue } from './score_window.js';
import { seatToken, invitationLink, handEvents } from './table_api.js';

/** The table screen for table `id` in `view`. */
export class TableScreen {
  constructor(view, id, { replay = false, replayHand = null } = {}) {
    this.view = view;
    this.replay = replay;
    this.replayHand = replayHand;
    this.id = id;
    this.state = null;
    this.prompt = null;
    this.promptAt = 0;
    this.arrangement = [];
    this.autoSort = true;
    this.selected = null;
    this.log = [];
    this.logVersion = 0; // bumped on every line: the box is redrawn when it changes
    this.draws = new Map(); // the hand's draws per player (see dealtTile)
    this.status = 'connecting';
    this.scoreDialog = null;
    this.scoreShownFor = null;
    this.snapshotAsked = false;
    this.frame = null;
    this.ticker = null;
    this.lastTick = null;
    this.drawnAt = []; // (event at_us, time drawn) pairs, for the latency figure
    this.keys = (e) => this.onKey(e);
    this.build();
    if (replay) {
      // A replay is drawn from states it gives (showState), with no socket and no chat.
      this.chatForm.hidden = true;
      this.connection = { send: () => false, close() {} };
      this.status = 'replay';
      this.invited = false;
      return;
    }
    // An invitation (`#/table/ID?join`): take a free seat at once if we can.
    this.invited = /[?&]join\b/.test(location.hash);
    document.addEventListener('keydown', this.keys);
    const mine = guestSeats()[id];
    this.connection = new TableConnection(id, {
      token: mine?.token ?? null,
      lastSeq: () => this.state?.seq ?? null,
      handlers: {
        message: (msg) => this.onMessage(msg),
        status: (s) => { this.status = s; this.schedule(); },
        closed: (code, reason) => this.onClosed(code, reason),
      },
    });
    window.mjTable = this; // for the browser tests and the curious: the live state
  }

  dispose() {
    this.connection.close();
    document.removeEventListener('keydown', this.keys);
    clearInterval(this.ticker);
    cancelAnimationFrame(this.frame);
    // Removed, not only closed: the next table makes its own.
    this.scoreDialog?.close();
    this.scoreDialog?.remove();
    this.scoreDialog = null;
    document.body.classList.remove('at-table');
    document.title = 'Mah-Jong';
    if (window.mjTable === this) window.mjTable = null;
  }

  /**
   * Shows a state given from outside (a replay's step); `msg`, the event
   * that made it, is announced; `log`, the lines up to it, fill the log.
   */
  showState(state, msg, log = []) {
    this.log = log.slice(-LOG_LINES);
    this.logVersion += 1;
    this.state = state;
    this.shoutText = null;
    if (msg && REPLAY_SHOUTS.includes(msg.event.type)) this.shout(shoutFor(msg.event, (p) => this.who(p)));
    this.schedule();
  }

  // ---- the stream

  onMessage(msg) {
    switch (msg.type) {
      case 'snapshot': {
        const chat = this.state?.chat ?? [];
        const first = !this.state;
        this.state = fromSnapshot(msg);
        this.state.chat = chat.length ? chat : this.state.chat;
        // Joined mid-hand: the deal is over (its draws are not counted again).
        this.draws = new Map(msg.game?.hand ? [0, 1, 2, 3].map((p) => [p, 13]) : []);
        this.snapshotAsked = false;
        if (msg.seat == null) this.prompt = null;
        // The seat keeps the wish on the server; said again on every
        // snapshot in case the table was brought back since.
        if (msg.seat != null && everyDiscard()) this.connection.send(claimPromptsMessage(true));
        if (first) {
          this.restoreLog(msg.table.seq);
          if (this.invited) acceptInvitation(this);
        }
        break;
      }
      case 'event':
        if (!this.state) return;
        if (msg.seq <= this.state.seq) return;
        this.onEvent(msg);
        break;
      case 'prompt':
        this.onPrompt(msg);
        break;
      case 'error':
        toast(msg.message);
        this.addLog(`⚠ ${msg.message}`);
        break;
      default:
        break;
    }
    this.schedule();
  }

  onEvent(msg) {
    const before = this.state.game?.hand?.number;
    // Described before it is applied: "is back" needs to know the seat was away.
    const text = this.logLine(this.draws, msg.event);
    applyEvent(this.state, msg);
    this.drawnAt.push([msg.at_us, performance.now()]);
    const e = msg.event;
    if (text) {
      this.addLog(text);
      if (announced(e)) announce(text);
    }
    const shout = shoutFor(e, (p) => this.who(p));
    if (shout) this.shout(shout);
    switch (e.type) {
      case 'claimed':
        play('claim');
        break;
      case 'mah_jong':
      case 'robbed_kong':
        play('win');
        break;
      case 'chat':
        if (e.seat !== this.state.seat) play('claim');
        break;
      case 'discarded':
        if (e.player === this.state.seat) this.selected = null;
        break;
      case 'hand_started':
        this.scoreDialog?.close();
        this.autoSort = true;
        break;
      case 'settled':
      case 'washed_out':
        this.scoreShownFor = null; // opened once drawn
        break;
      default:
        break;
    }
    if (before !== this.state.game?.hand?.number) this.selected = null;
    if (this.state.stale && !this.snapshotAsked) {
      this.snapshotAsked = true;
      this.connection.send({ type: 'snapshot' });
    }
  }

  onPrompt(msg) {
    const wasMine = this.prompt?.actions?.length;
    this.prompt = msg;
    this.promptAt = performance.now();
    if (msg.actions.length && !wasMine) {
      play('turn');
      if (document.hidden) document.title = '● Your move — Mah-Jong';
    }
    if (!msg.actions.length) document.title = 'Mah-Jong';
    if (msg.decision === 'discard' && msg.drawn) this.preselect = msg.drawn;
    clearInterval(this.ticker);
    if (msg.deadline) this.ticker = setInterval(() => this.tick(), 100);
  }

  onClosed(code, reason) {
    this.status = 'closed';
    this.closedText = closedText(code, reason);
    this.schedule();
  }

  onKey(e) {
    onTableKey(this, e);
  }

  // ---- the words (narration.js)

  /** The player's name, or "You". */
  who(p) {
    return whoIs(this.state, p);
  }

  /**
   * The log's line for event `e`, or null: none for the deal's draws,
   * counted per hand in `draws` (see log_text.js's dealtTile).
   */
  logLine(draws, e) {
    return logLine(draws, e, (x) => this.describe(x));
  }

  /** The sentence for event `e` (see log_text.js), as this viewer reads it. */
  describe(e) {
    return eventSentence(this.state, e, { everything: this.replay });
  }

  /**
   * After a refresh (the first snapshot of this page), the log and chat of
   * the hand before and the hand being played, from the table's stored
   * events as this seat (or a spectator) saw them: those up to the
   * snapshot's `seq`; the stream brings the rest.
   */
  async restoreLog(upTo) {
    const n = this.state.game?.hands_started ?? 0;
    if (!n || this.replay) return;
    const lines = [];
    const chat = [];
    const draws = new Map();
    for (const k of n > 1 ? [n - 1, n] : [n]) {
      let history;
      try {
        history = await handEvents(this.id, k, this.token());
      } catch { continue; } // the log starts empty, as before
      const hand = historyLines(history.events, upTo, (e) => this.logLine(draws, e));
      lines.push(...hand.lines);
      chat.push(...hand.chat);
    }
    if (!this.state) return;
    this.log = [...lines, ...this.log].slice(-LOG_LINES);
    this.logVersion += 1;
    this.state.chat = [...chat, ...this.state.chat].slice(-CHAT_LINES);
    this.schedule();
  }

  addLog(text) {
    appendLog(this.log, text);
    this.logVersion += 1;
  }

  shout(text) {
    this.shoutText = text;
    this.shoutKey = (this.shoutKey ?? 0) + 1;
    clearTimeout(this.shoutTimer);
    this.shoutTimer = setTimeout(() => { this.shoutText = null; this.schedule(); }, 2000);
  }

  tick() {
    const d = this.prompt?.deadline;
    if (!d || !this.prompt.actions.length) { clearInterval(this.ticker); return; }
    const left = d.ms_left - (performance.now() - this.promptAt);
    const bar = this.view.querySelector('#claim-timer');
    if (bar) {
      bar.value = Math.max(0, left);
      bar.classList.toggle('late', left < 5000);
      const label = this.view.querySelector('#claim-seconds');
      if (label) label.textContent = `${Math.max(0, Math.ceil(left / 1000))} s`;
    }
    const second = Math.ceil(left / 1000);
    if (left < 5000 && left > 0 && second !== this.lastTick) { this.lastTick = second; play('tick'); }
    if (left <= 0) clearInterval(this.ticker);
  }

  // ---- what we send

  send(msg) {
    if (!this.connection.send(msg)) toast('Not connected: the move was not sent. Reconnecting…');
  }

  act(action) {
    this.send({ type: 'act', action });
  }

  /** This browser's guest token for the seat here (null for an account). */
  token() {
    return seatToken(this.id);
  }

  /** The link that seats a friend at this table. */
  invitation() {
    return invitationLink(location, this.id);
  }

  // ---- the screen

  build() {
    // The bar's status (redrawn freely) and its controls (redrawn only when they change).
    this.barStatus = h('span', { class: 'bar-part' });
    this.barControls = h('span', { class: 'bar-part' });
    this.bar = h('div', { class: 'table-bar' }, this.barStatus, this.barControls);
    this.felt = h('div', { class: 'felt', role: 'region', 'aria-label': 'The table' });
    this.claimBox = h('div', { id: 'claim-box' });
    this.actionsBox = h('div', { class: 'actions', role: 'toolbar', 'aria-label': 'Your moves', id: 'actions' });
    this.setupBox = h('div', { id: 'setup' });
    this.logBox = h('div', { class: 'log', id: 'game-log', role: 'log', 'aria-label': 'What happened', tabindex: 0 });
    const chatInput = h('input', { id: 'chat-input', maxlength: 500, placeholder: 'Say something…', 'aria-label': 'Chat message', autocomplete: 'off' });
    const chatForm = h('form', {}, chatInput, h('button', { type: 'submit' }, 'Send'));
    chatForm.addEventListener('submit', (e) => {
      e.preventDefault();
      const text = chatInput.value.trim();
      if (!text) return;
      this.send({ type: 'chat', text });
      chatInput.value = '';
    });
    this.chatForm = chatForm;
    this.side = h('aside', { class: 'side' }, this.setupBox, h('h2', { class: 'visually-hidden' }, 'Game log and chat'), this.logBox,
      h('div', { class: 'chat' }, chatForm));
    // The claim panel and the moves share one place, kept in view at every
    // screen size (sticky at the bottom of the window when the table is taller).
    this.dock = h('div', { class: 'dock', id: 'dock' }, this.claimBox, this.actionsBox);
    this.hints = h('div', { class: 'hints', id: 'hints', role: 'note', hidden: true });
    fill(this.view, h('section', { class: 'table-screen', 'aria-label': 'Mah-Jong table' },
      this.bar, this.hints, this.felt, this.dock, this.side));
    // The table fills the window, so that the felt gives way before the dock does.
    document.body.classList.add('at-table');
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.render();
    });
  }

  /** The seat shown at the bottom: ours, or East's first seat for a spectator. */
  bottomSeat() {
    return this.state?.seat ?? 0;
  }

  render() {
    if (!this.state) {
      fill(this.felt, h('p', { class: 'loading' }, this.status === 'closed' ? this.closedText : 'Connecting to the table…'));
      return;
    }
    // Only players talk (the server refuses a spectator's chat).
    this.chatForm.hidden = this.replay || this.state.seat == null;
    renderBar(this);
    renderHints(this);
    this.renderFelt();
    renderActions(this);
    renderSetup(this);
    this.renderLog();
    showScoresWhenDue(this);
    const now = Date.now() * 1000;
    // Two figures per event: from its creation at the table (server clock) and
    // from its arrival here, to now, once drawn.
    const latencies = (window.mjLatencies ??= []);
    const drawing = (window.mjDrawDelays ??= []);
    const here = performance.now();
    for (const [at, arrived] of this.drawnAt) {
      latencies.push(now - at);
      drawing.push((here - arrived) * 1000);
    }
    if (latencies.length > 5000) latencies.splice(0, latencies.length - 5000);
    if (drawing.length > 5000) drawing.splice(0, drawing.length - 5000);
    this.drawnAt = [];
  }

  /** The game's log and the chat, in one box, chat in bold; redrawn only when a line came. */
  renderLog() {
    const chat = this.state.chat;
    const key = logKey(this.logVersion, chat);
    if (key === this.logKey) return;
    this.logKey = key;
    fill(this.logBox, logContent(this.log, chat));
    this.logBox.scrollTop = this.logBox.scrollHeight;
  }

  // ---- the felt

  renderFelt() {
    const { table, game } = this.state;
    const hand = game?.hand;
    const bottom = this.bottomSeat();
    const positions = [['me', bottom], ['right', (bottom + 1) % 4], ['top', (bottom + 2) % 4], ['left', (bottom + 3) % 4]];
    const players = positions.map(([where, p]) => this.renderPlayer(where, p));
    const pool = onePool();
    const centre = h('div', { class: `centre${pool ? '' : ' by-player'}`, 'aria-label': 'Discards' });
    if (hand) {
      const last = hand.discards.length - 1;
      const info = h('div', { class: 'info' },
        h('span', {}, 'Prevailing wind: ', h('strong', { id: 'prevailing' }, game.round)),
        h('span', {}, `Wall: ${hand.live_tiles_left}`),
        hand.phase === 'finished' ? h('strong', {}, hand.outcome === 'wash_out' ? 'Washed out' : 'Hand over') : null,
        viewSetting('showWall') ? wallStrip(hand) : null);
      const tile = ([p, t], i) => {
        const el = tileElement(t, { small: true });
        el.setAttribute('role', 'listitem');
        el.setAttribute('aria-label', `${tileName(t)}, from ${this.who(p)}`);
        if (i === last && hand.claimable) el.classList.add('discard-latest');
        // The newest discard slides in once (not again when the table is redrawn).
        if (i === last && moving() && this.animatedDiscard !== `${hand.number}/${i}`) {
          this.animatedDiscard = `${hand.number}/${i}`;
          el.classList.add('arriving');
        }
        return el;
      };
      const numbered = hand.discards.map((d, i) => [d, i]);
      const discards = pool
        ? h('div', { class: 'discards', id: 'discards', role: 'list', 'aria-label': 'Discards, oldest first' }, numbered.map(([d, i]) => tile(d, i)))
        // In front of each player, as xmj draws them: ours at the bottom.
        : h('div', { class: 'discards-by-player', id: 'discards' }, positions.map(([where, p]) => h('div', {
          class: `discards ${where}`, role: 'list', 'aria-label': `${this.who(p) === 'You' ? 'Your' : `${this.who(p)}'s`} discards, oldest first`, dataset: { player: p },
        }, numbered.filter(([d]) => d[0] === p).map(([d, i]) => tile(d, i)))));
      centre.append(info, discards);
    } else {
      centre.append(h('p', {}, this.replay ? `Hand ${this.replayHand} is about to be dealt: step forward.`
        : table.state === 'open' ? 'Waiting for the game to start.' : table.state === 'over' ? 'The game is over.'
          : game?.hands_started ? 'Waiting for the next hand.' : 'Waiting for the first hand.'));
    }
    if (this.shoutText) centre.append(h('div', { class: 'announce', 'aria-hidden': 'true' }, h('span', { key: this.shoutKey }, this.shoutText)));
    fill(this.felt, players, centre);
  }

  renderPlayer(where, p) {
    const { table, game } = this.state;
    const hand = game?.hand;
    const seatInfo = table.seats[p];
    const seat = hand ? seatOf(hand, p) : null;
    const wind = seat?.wind ?? null;
    const toAct = hand && hand.phase !== 'finished' && hand.to_act === p && !table.waiting_for_ready.length;
    const box = h('div', { class: `player ${where}${toAct ? ' to-act' : ''}`, 'aria-label': `${seatInfo?.name ?? 'Empty seat'}${wind ? `, ${wind}` : ''}`, dataset: { player: p } });
    box.append(h('div', { class: 'who' },
      wind ? h('span', { class: `wind-badge${wind === 'East' ? ' east' : ''}`, title: `${wind} wind${wind === 'East' ? ' (the dealer)' : ''}` }, wind[0]) : null,
      h('span', { class: 'name' }, seatInfo?.name ?? `Seat ${p + 1} (free)`),
      p === this.state.seat ? h('span', {}, '(you)') : null,
      seatInfo?.robot ? h('span', { class: 'robot-tag', title: 'a robot player' }, 'robot') : null,
      table.manager === p ? h('span', { title: 'game manager' }, '★') : null,
      h('span', { class: 'score' }, `${table.scores[p]}`),
      seatInfo?.name && !seatInfo.connected ? h('span', { class: 'offline' }, 'away') : null,
      table.waiting_for_ready.includes(p) ? h('span', { class: 'muted' }, 'not ready') : null,
      toAct ? h('span', { class: 'turn' }, hand.phase === 'discarded' ? 'discarded: claims open' : 'to play') : null,
      seat?.calling ? h('span', { class: 'turn' }, 'calling') : null));
    if (!seat) return box;
    const exposed = h('div', { class: 'exposed' },
      seat.sets.map((set) => h('span', { class: `set${setConcealed(set) ? ' concealed' : ''}`, 'aria-label': `${describeSet(set)}` },
        setTiles(set).map((t) => tileElement(t, { small: true })))),
      seat.bonus.length ? h('span', { class: 'set', 'aria-label': 'flowers and seasons' }, seat.bonus.map((t) => tileElement(t, { small: true }))) : null);
    if (where === 'me' && p === this.state.seat && seat.concealed) {
      box.append(exposed, renderMyHand(this, seat));
      // At a table that shows them (ShowWaits): the tiles we wait on.
      const waits = this.prompt?.waits ?? [];
      if (waits.length) {
        box.append(h('div', { class: 'waits', id: 'waits', 'aria-label': `You wait on ${waits.map(tileName).join(', ')}` },
          h('span', {}, 'You wait on:'), waits.map((t) => tileElement(t, { small: true }))));
      }
    } else if (seat.concealed) {
      // Revealed (after a Mah-Jong), or the bottom seat of a finished hand.
      box.append(exposed, h('div', { class: 'hidden-hand', 'aria-label': 'concealed tiles' }, sortTiles(seat.concealed).map((t) => tileElement(t, { small: where !== 'me' }))));
    } else {
      const backs = [];
      for (let i = 0; i < seat.concealed_count; i++) backs.push(tileElement(null, { small: true }));
      box.append(exposed, h('div', { class: 'hidden-hand', 'aria-label': `${seat.concealed_count} concealed tiles` }, backs));
    }
    return box;
  }

  /** The selected tile of our hand, or null. */
  selectedTile() {
    return this.selected == null ? null : this.arrangement[this.selected] ?? null;
  }

  /** Discards the selected tile (with an Original Call when `calling`), or says why not. */
  discardSelected(calling) {
    discardSelected(this, calling);
  }

  // ---- the scoring window (score_window.js)

  /** Opens the scoring window; `focus` puts the keyboard on its first button. */
  openScores(focus) {
    openScores(this, focus);
  }
}

/**
 * The wall as xmj's --show-wall draws it, one block per stack of two: the
 * live wall (drawn from one end) and the dead wall (loose tiles) apart.
 */
function wallStrip(hand) {
  const stacks = (n) => Math.ceil(Math.max(0, n) / 2);
  const blocks = (n, cls) => Array.from({ length: stacks(n) }, () => h('span', { class: cls }));
  return h('span', { class: 'wall-strip', id: 'wall', role: 'img', 'aria-label': `The wall: ${hand.live_tiles_left} live tiles, ${hand.dead_tiles_left ?? 0} in the dead wall` },
    h('span', { class: 'live' }, blocks(hand.live_tiles_left, 'stack')),
    h('span', { class: 'dead', title: 'the dead wall (loose tiles)' }, blocks(hand.dead_tiles_left ?? 0, 'stack')));
}

function describeSet(set) {
  const kind = typeof set.kind === 'string' ? set.kind.replace('closed_', 'concealed ') : set.kind.kong.annexed ? 'kong (added to a pung)' : 'kong';
  return `${kind} of ${tileName(set.tile)}`;
}
