// The scoring calculator page ("scoring mode", for people playing with real
// tiles): the four hands are entered by clicking tiles from a palette, with
// their sets, concealed tiles and bonus tiles, the winds and how the hand was
// won; the server scores each hand with its own scoring (POST /api/v1/score)
// and settles the four scores (POST /api/v1/settle) under the chosen preset.
// A player's score may be typed instead of its hand.
//
// The data and the requests are in described_hand.js; this module only draws
// them and passes on what the person does.

import { h, fill, announce } from './dom.js';
import { ALL_TILES, tileElement, tileName } from './tiles.js';
import { setTiles } from './state.js';
import { handTiles } from './scoring.js';
import * as model from './described_hand.js';

const PALETTE_ROW = 9;

/** The words for a set: "the concealed pung of Red Dragon". */
function setWords(set) {
  const kind = model.kindOf(set.kind);
  return `the ${(kind?.label ?? 'set').toLowerCase()} of ${tileName(set.tile)}`;
}

/**
 * Draws the calculator into `root`. `ctx.api(method, path, body)` calls the
 * REST API (answering parsed JSON, or throwing an error with `code` and
 * `message`). Answers an object whose dispose() forgets pending answers.
 */
export function mountCalculator(root, ctx) {
  let calc = model.newCalculator();
  let presets = [];
  let editing = 0;
  let target = { to: 'concealed' };
  let results = [null, null, null, null];
  let settlement = null;
  let busy = false;
  let disposed = false;
  let round = 0; // scoring round: an answer for an older round is dropped

  const presetOptions = () => presets.find((p) => p.name === calc.preset)?.options ?? {};
  const option = (name, fallback) => (name in calc.options ? calc.options[name] : presetOptions()[name] ?? fallback);

  // ---- the rules ------------------------------------------------------
  const presetSelect = h('select', { id: 'calc-preset', onchange: () => { calc.preset = presetSelect.value; changed(); } },
    h('option', { value: calc.preset }, calc.preset));
  const presetText = h('p', { class: 'muted', id: 'calc-preset-text' });
  const prevailingSelect = h('select', { id: 'calc-prevailing', onchange: () => { calc.prevailing = prevailingSelect.value; changed(); } },
    model.WINDS.map((w) => h('option', { value: w }, w)));
  const optionsText = h('textarea', { id: 'calc-options', rows: 3, cols: 40, spellcheck: 'false', 'aria-describedby': 'calc-options-help calc-options-error',
    placeholder: '{"MahJongScore": 10}', oninput: () => {
      const parsed = model.parseOptions(optionsText.value);
      optionsError.textContent = parsed.error ?? '';
      optionsText.setAttribute('aria-invalid', parsed.error ? 'true' : 'false');
      if (!parsed.error) { calc.options = parsed.options; changed(); }
    } });
  const optionsError = h('p', { id: 'calc-options-error', class: 'error-text' });
  const givenBox = h('input', { type: 'checkbox', id: 'calc-given', onchange: () => { calc.given = givenBox.checked; changed(); } });
  const extraHands = h('input', { type: 'number', id: 'calc-extra-hands', min: 0, max: 99, value: 0, inputmode: 'numeric',
    onchange: () => { calc.extra_hands = Math.max(0, Math.min(99, Number(extraHands.value) || 0)); changed(); } });
  const doubleDice = h('input', { type: 'checkbox', id: 'calc-double-dice', onchange: () => { calc.double_dice = doubleDice.checked; changed(); } });
  const doubleDiceLabel = h('label', { for: 'calc-double-dice' }, doubleDice, 'The dice were a double');

  const rules = h('fieldset', { class: 'calc-rules' },
    h('legend', {}, 'Rules'),
    h('div', { class: 'row' },
      h('label', { for: 'calc-preset' }, 'Rule preset'), presetSelect,
      h('label', { for: 'calc-prevailing' }, 'Prevailing wind'), prevailingSelect),
    presetText,
    h('details', {},
      h('summary', {}, 'More rules'),
      h('p', { id: 'calc-options-help', class: 'muted' }, 'Game options over the preset, by name, as JSON (see the presets\u2019 list of options).'),
      h('label', { for: 'calc-options' }, 'Options'), ' ', optionsText, optionsError,
      h('p', { class: 'row' },
        h('label', { for: 'calc-given' }, givenBox, 'Score the sets exactly as entered (otherwise the best way of arranging the concealed tiles is found)')),
      h('p', { class: 'row' },
        h('label', { for: 'calc-extra-hands' }, 'Dealer\u2019s extra hands before this one'), extraHands, doubleDiceLabel)));

  // ---- the four players -----------------------------------------------
  const cards = model.WINDS.map((wind, i) => {
    const mode = h('select', { id: `calc-mode-${i}`, onchange: () => { calc.players[i].mode = mode.value; changed(); } },
      h('option', { value: 'hand' }, 'Describe the hand'), h('option', { value: 'score' }, 'Enter its score'));
    const typed = h('input', { id: `calc-typed-${i}`, type: 'text', inputmode: 'numeric', size: 8, autocomplete: 'off',
      'aria-describedby': `calc-typed-error-${i}`,
      oninput: () => { calc.players[i].typed = typed.value; invalidate(); } });
    const typedError = h('span', { id: `calc-typed-error-${i}`, class: 'error-text' });
    const typedRow = h('p', { class: 'row' }, h('label', { for: `calc-typed-${i}` }, `${wind}\u2019s score`), typed, typedError);
    const edit = h('button', { type: 'button', id: `calc-edit-${i}`, 'aria-controls': 'calc-editor',
      onclick: () => { editing = i; render(); editorHeading.focus(); } }, `Edit ${wind}\u2019s hand`);
    const summary = h('div', { class: 'calc-summary' });
    const card = h('section', { class: 'calc-player', 'aria-labelledby': `calc-player-${i}` },
      h('h3', { id: `calc-player-${i}` }, wind),
      h('p', { class: 'row' }, h('label', { for: `calc-mode-${i}` }, 'Its score'), mode),
      typedRow, edit, summary);
    return { card, mode, typed, typedError, typedRow, edit, summary };
  });

  // ---- the hand being described -----------------------------------------
  const editorHeading = h('h2', { id: 'calc-editor-heading', tabindex: -1 });
  const targetName = 'calc-target';
  const kindSelect = h('select', { id: 'calc-set-kind', 'aria-label': 'Kind of set',
    onchange: () => { target = { to: 'set', kind: kindSelect.value }; targetRadios.set.checked = true; refreshPalette(); } },
    model.SET_KINDS.map((k) => h('option', { value: k.id }, k.label)));
  const targetRadio = (value, label, extra) => {
    const input = h('input', { type: 'radio', name: targetName, id: `calc-target-${value}`, value,
      onchange: () => { target = value === 'set' ? { to: 'set', kind: kindSelect.value } : { to: value }; refreshPalette(); } });
    return [input, h('label', { for: `calc-target-${value}` }, input, label), extra];
  };
  const [concealedRadio, concealedLabel] = targetRadio('concealed', 'Concealed tiles');
  const [bonusRadio, bonusLabel] = targetRadio('bonus', 'Flowers, seasons and animals');
  const [setRadio, setLabel] = targetRadio('set', 'A set:');
  const targetRadios = { concealed: concealedRadio, bonus: bonusRadio, set: setRadio };
  concealedRadio.checked = true;

  const palette = h('div', { class: 'calc-palette tiles', role: 'toolbar', 'aria-label': 'Tiles to add', 'aria-describedby': 'calc-palette-help',
    onkeydown: paletteKeys });
  const paletteButtons = ALL_TILES.map((code) => {
    const b = tileElement(code, { tag: 'button' });
    b.type = 'button';
    b.tabIndex = -1;
    b.addEventListener('click', () => addTile(code));
    palette.append(b);
    return b;
  });
  paletteButtons[0].tabIndex = 0;
  const paletteHelp = h('p', { id: 'calc-palette-help', class: 'muted' },
    'Click a tile, or move along the tiles with the arrow keys and press Enter, to add it where chosen above. A set is named by its tile: a chow by its lowest.');
  const handView = h('div', { class: 'calc-hand', id: 'calc-hand' });
  const handStatus = h('p', { class: 'calc-status', role: 'status' });
  const editor = h('fieldset', { id: 'calc-editor', class: 'calc-editor' },
    h('legend', { class: 'visually-hidden' }, 'The hand being described'),
    editorHeading,
    h('div', { class: 'row', role: 'radiogroup', 'aria-label': 'Add tiles to' },
      h('span', {}, 'Add to:'), concealedLabel, bonusLabel, setLabel, kindSelect),
    palette, paletteHelp, handStatus, handView);

  // ---- how the hand was won --------------------------------------------
  const winnerSelect = h('select', { id: 'calc-winner', onchange: () => {
    calc.winner = winnerSelect.value === '' ? null : Number(winnerSelect.value);
    changed();
  } }, h('option', { value: '' }, 'Nobody yet'), model.WINDS.map((w, i) => h('option', { value: i }, w)));
  const tileSelect = h('select', { id: 'calc-win-tile', onchange: () => { calc.win.tile = tileSelect.value || null; changed(); } });
  const fromRadios = model.WIN_FROM.map((f) => {
    const input = h('input', { type: 'radio', name: 'calc-from', id: `calc-from-${f.id}`, value: f.id,
      onchange: () => { calc.win.from = f.id; changed(); } });
    return { input, label: h('label', { for: `calc-from-${f.id}` }, input, f.label) };
  });
  const discarderSelect = h('select', { id: 'calc-discarder', onchange: () => {
    calc.discarder = discarderSelect.value === '' ? null : Number(discarderSelect.value);
    changed();
  } });
  const discarderLabel = h('label', { for: 'calc-discarder', id: 'calc-discarder-label' }, 'Discarded by');
  const robbedHint = h('span', { class: 'muted', id: 'calc-robbed-hint' }, 'Its hand shows the robbed kong as a pung again.');
  const cannonSelect = h('select', { id: 'calc-cannon', onchange: () => {
    calc.cannon = cannonSelect.value === '' ? null : Number(cannonSelect.value);
    changed();
  } });
  const flag = (name, label) => {
    const input = h('input', { type: 'checkbox', id: `calc-${name}`, onchange: () => { calc.win[name] = input.checked; changed(); } });
    return { input, label: h('label', { for: `calc-${name}` }, input, label) };
  };
  const flags = {
    last_tile: flag('last_tile', 'No live tile was left (won with the last tile)'),
    kong_upon_kong: flag('kong_upon_kong', 'Kong upon kong: the loose tile of a second kong'),
    original_call: flag('original_call', 'Completed an Original Call'),
    no_discard: flag('no_discard', 'Before any discard of its own (Heaven\u2019s or Earth\u2019s Blessing)'),
    only_east_discarded: flag('only_east_discarded', 'Nobody but East had discarded (Earth\u2019s Blessing)'),
  };
  const eastWins = h('input', { type: 'number', id: 'calc-east-wins', min: 0, max: 12, value: 0, inputmode: 'numeric',
    onchange: () => { calc.win.east_wins_before = Math.max(0, Math.min(12, Number(eastWins.value) || 0)); changed(); } });
  const winDetails = h('div', { class: 'calc-win-details' },
    h('p', { class: 'row' }, h('label', { for: 'calc-win-tile' }, 'Winning tile'), tileSelect),
    h('div', { class: 'row', role: 'radiogroup', 'aria-label': 'Where the winning tile came from' },
      h('span', {}, 'It came from:'), fromRadios.map((f) => f.label)),
    h('p', { class: 'row' }, discarderLabel, discarderSelect, robbedHint),
    h('div', { class: 'calc-flags' }, Object.values(flags).map((f) => h('p', {}, f.label))),
    h('p', { class: 'row' }, h('label', { for: 'calc-east-wins' }, 'East\u2019s wins in a row before this hand'), eastWins));
  const win = h('fieldset', { class: 'calc-win' },
    h('legend', {}, 'How the hand was won'),
    h('p', { class: 'row' }, h('label', { for: 'calc-winner' }, 'Went Mah-Jong'), winnerSelect),
    winDetails,
    h('p', { class: 'row' }, h('label', { for: 'calc-cannon' }, 'Let off a cannon (pays for everyone)'), cannonSelect));

  // ---- scoring and the answers -------------------------------------------
  const scoreButton = h('button', { type: 'button', class: 'primary', id: 'calc-score', onclick: () => scoreAll() }, 'Score and settle');
  const exampleButton = h('button', { type: 'button', id: 'calc-example', onclick: () => loadExample() }, 'Load seed 004\u2019s worked example');
  const clearButton = h('button', { type: 'button', id: 'calc-clear', onclick: () => {
    calc = { ...model.newCalculator(calc.preset), prevailing: calc.prevailing };
    editing = 0;
    syncControls();
    changed();
    editorHeading.focus();
  } }, 'Start again');
  const message = h('p', { id: 'calc-message', class: 'calc-message', role: 'status' });
  const resultsBox = h('section', { id: 'calc-results', 'aria-label': 'Scores', tabindex: -1 });
  const settlementBox = h('section', { id: 'calc-settlement', 'aria-label': 'Settlement' });

  fill(root, h('div', { class: 'calculator' },
    h('h1', {}, 'Scoring calculator'),
    h('p', {}, 'For a game played with real tiles: lay out each player\u2019s hand here, say how the hand was won, and the server scores every hand exactly as it scores its own games, then settles them under the rules chosen. A player\u2019s score may be typed instead.'),
    h('p', { class: 'row' }, exampleButton, clearButton),
    rules,
    h('fieldset', { class: 'calc-players' }, h('legend', {}, 'The four hands'), h('div', { class: 'calc-player-grid' }, cards.map((c) => c.card))),
    editor,
    win,
    h('p', { class: 'row' }, scoreButton), message,
    resultsBox, settlementBox));

  // ---- behaviour ---------------------------------------------------------
  function invalidate() {
    round += 1;
    results = [null, null, null, null];
    settlement = null;
    renderResults();
  }

  function changed() {
    invalidate();
    render();
  }

  function addTile(code) {
    const hands = calc.players.map((p) => p.hand);
    const why = model.refusal(hands, editing, target, code);
    if (why) {
      message.textContent = why;
      return;
    }
    calc.players[editing].hand = model.withTile(calc.players[editing].hand, target, code);
    const where = target.to === 'set' ? `a ${model.SET_KINDS.find((k) => k.id === target.kind).label.toLowerCase()}`
      : target.to === 'bonus' ? 'the bonus tiles' : 'the concealed tiles';
    announce(`${tileName(code)} added to ${calc.players[editing].wind}\u2019s hand as ${where}`);
    message.textContent = '';
    changed();
  }

  function remove(part, index) {
    calc.players[editing].hand = model.without(calc.players[editing].hand, part, index);
    changed();
    // Keep the keyboard where it was: the next item of the same kind, or the heading.
    const next = handView.querySelectorAll(`[data-part="${part}"]`);
    (next[Math.min(index, next.length - 1)] ?? editorHeading).focus();
  }

  function paletteKeys(e) {
    const enabled = paletteButtons.filter((b) => !b.hidden);
    const at = enabled.indexOf(document.activeElement);
    if (at < 0) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -PALETTE_ROW, ArrowDown: PALETTE_ROW };
    let to = null;
    if (e.key in moves) to = Math.max(0, Math.min(enabled.length - 1, at + moves[e.key]));
    else if (e.key === 'Home') to = 0;
    else if (e.key === 'End') to = enabled.length - 1;
    if (to == null) return;
    e.preventDefault();
    for (const b of enabled) b.tabIndex = -1;
    enabled[to].tabIndex = 0;
    enabled[to].focus();
  }

  function refreshPalette() {
    const hands = calc.players.map((p) => p.hand);
    const flowers = option('Flowers', true) !== false;
    const animals = option('Animals', false) === true;
    for (const b of paletteButtons) {
      const code = b.dataset.tile;
      b.hidden = (/^[1-4][FS]$/.test(code) && !flowers) || (/^[1-4]A$/.test(code) && !animals);
      const why = model.refusal(hands, editing, target, code);
      // Not `disabled`: a disabled button leaves the keyboard's path.
      b.setAttribute('aria-disabled', why ? 'true' : 'false');
      b.title = why ? `${tileName(code)}: ${why}` : `Add ${tileName(code)}`;
    }
    if (!paletteButtons.some((b) => b.tabIndex === 0 && !b.hidden)) {
      const first = paletteButtons.find((b) => !b.hidden);
      for (const b of paletteButtons) b.tabIndex = -1;
      if (first) first.tabIndex = 0;
    }
  }

  function renderHand() {
    const player = calc.players[editing];
    const hand = player.hand;
    editorHeading.textContent = `${player.wind}\u2019s hand`;
    const winner = calc.winner === editing;
    handStatus.textContent = player.mode === 'score'
      ? `${player.wind}\u2019s score is typed in: this hand is not scored.`
      : model.shortfall(hand, winner) ?? `${model.heldCount(hand)} tiles: complete for a ${winner ? 'winning' : 'losing'} hand.`;
    const setItems = hand.sets.map((set, i) => h('li', { class: `set${set.kind.startsWith?.('closed_') ? ' concealed' : ''}` },
      setTiles(set).map((t) => tileElement(t, { small: true })),
      h('button', { type: 'button', class: 'link', dataset: { part: 'sets' }, onclick: () => remove('sets', i) },
        h('span', { class: 'visually-hidden' }, `Remove ${setWords(set)}`), h('span', { 'aria-hidden': 'true' }, 'Remove'))));
    const tileButtons = (part) => hand[part].map((t, i) => {
      const b = tileElement(t, { tag: 'button', small: true });
      b.type = 'button';
      b.dataset.part = part;
      b.setAttribute('aria-label', `Remove ${tileName(t)}`);
      b.title = `Remove ${tileName(t)}`;
      b.addEventListener('click', () => remove(part, i));
      return b;
    });
    fill(handView,
      h('h3', {}, 'Sets'),
      hand.sets.length ? h('ul', { class: 'calc-sets' }, setItems) : h('p', { class: 'muted' }, 'No set yet.'),
      h('h3', {}, 'Concealed tiles'),
      hand.concealed.length ? h('div', { class: 'tiles' }, tileButtons('concealed')) : h('p', { class: 'muted' }, 'None yet.'),
      h('h3', {}, 'Flowers, seasons and animals'),
      hand.bonus.length ? h('div', { class: 'tiles' }, tileButtons('bonus')) : h('p', { class: 'muted' }, 'None.'),
      (hand.sets.length || hand.concealed.length || hand.bonus.length)
        ? h('p', {}, h('button', { type: 'button', onclick: () => { calc.players[editing].hand = model.newHand(); changed(); editorHeading.focus(); } },
          `Clear ${player.wind}\u2019s hand`)) : null);
  }

  function renderCards() {
    cards.forEach((c, i) => {
      const player = calc.players[i];
      c.mode.value = player.mode;
      c.typedRow.hidden = player.mode !== 'score';
      c.edit.hidden = player.mode !== 'hand';
      c.edit.setAttribute('aria-pressed', editing === i ? 'true' : 'false');
      c.card.classList.toggle('editing', editing === i);
      c.card.classList.toggle('winner', calc.winner === i);
      const typed = model.typedScore(player.typed);
      c.typedError.textContent = player.mode === 'score' && player.typed !== '' && typed.error ? typed.error : '';
      const r = results[i];
      fill(c.summary,
        calc.winner === i ? h('p', { class: 'calc-badge' }, 'Went Mah-Jong') : null,
        player.mode === 'hand' ? [
          handTiles({ sets: player.hand.sets, concealed: player.hand.concealed, bonus: player.hand.bonus }),
          h('p', { class: 'muted' }, model.notReady(calc, i) ?? 'Ready to score.'),
        ] : null,
        r?.answer ? h('p', { class: 'calc-score' }, 'Score: ', h('strong', {}, r.answer.score.score)) : null,
        r?.error ? h('p', { class: 'error-text' }, r.error) : null);
    });
  }

  function renderWin() {
    const w = calc.winner;
    winnerSelect.value = w == null ? '' : String(w);
    winDetails.hidden = w == null;
    const choices = w == null ? [] : model.winningTileChoices(calc.players[w].hand);
    if (calc.win.tile && !choices.includes(calc.win.tile)) calc.win.tile = null;
    if (!calc.win.tile && choices.length === 1) calc.win.tile = choices[0];
    fill(tileSelect, h('option', { value: '' }, choices.length ? 'Choose\u2026' : 'Add the concealed tiles first'),
      choices.map((t) => h('option', { value: t }, tileName(t))));
    tileSelect.value = calc.win.tile ?? '';
    for (const f of fromRadios) f.input.checked = f.input.value === calc.win.from;
    const another = model.fromAnother(calc);
    discarderLabel.textContent = calc.win.from === 'robbed_kong' ? 'Kong robbed from' : 'Discarded by';
    discarderLabel.parentElement.hidden = !another;
    robbedHint.hidden = calc.win.from !== 'robbed_kong';
    const others = model.WINDS.map((wind, i) => h('option', { value: i, disabled: i === w }, wind));
    fill(discarderSelect, h('option', { value: '' }, 'Choose\u2026'), others);
    discarderSelect.value = calc.discarder == null ? '' : String(calc.discarder);
    fill(cannonSelect, h('option', { value: '' }, 'Nobody'), model.WINDS.map((wind, i) => h('option', { value: i, disabled: i === w }, wind)));
    cannonSelect.value = calc.cannon == null ? '' : String(calc.cannon);
    for (const [name, f] of Object.entries(flags)) f.input.checked = calc.win[name];
    eastWins.value = calc.win.east_wins_before;
  }

  function render() {
    presetText.textContent = presets.find((p) => p.name === calc.preset)?.description ?? '';
    prevailingSelect.value = calc.prevailing;
    doubleDiceLabel.hidden = option('DoubleDice', false) !== true;
    renderCards();
    renderHand();
    renderWin();
    refreshPalette();
    scoreButton.disabled = busy;
  }

  function renderResults() {
    const shown = calc.players.map((p, i) => ({ p, i, r: results[i] })).filter(({ r }) => r?.answer);
    fill(resultsBox, shown.length ? [h('h2', {}, 'Scores'), h('div', { class: 'score-grid' }, shown.map(({ p, i, r }) => scoreCard(p, i, r.answer)))] : null);
    if (!settlement) {
      fill(settlementBox);
      return;
    }
    if (settlement.error) {
      fill(settlementBox, h('h2', {}, 'Settlement'), h('p', { class: 'error-text' }, settlement.error));
      return;
    }
    const s = settlement.answer;
    fill(settlementBox, h('h2', {}, 'Settlement'),
      h('table', { class: 'data calc-net' },
        h('caption', { class: 'visually-hidden' }, 'Each player\u2019s score and gain'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Player'), h('th', { scope: 'col', class: 'num' }, 'Hand score'),
          h('th', { scope: 'col', class: 'num' }, 'Gain'))),
        h('tbody', {}, model.WINDS.map((wind, i) => h('tr', {}, h('th', { scope: 'row' }, wind, calc.winner === i ? ' (Mah-Jong)' : ''),
          h('td', { class: 'num' }, settlement.scores[i]), h('td', { class: 'num' }, s.net[i] > 0 ? `+${s.net[i]}` : `${s.net[i]}`))))),
      h('h3', {}, 'Who pays whom'),
      s.payments.length ? h('ul', { class: 'calc-payments' }, s.payments.map((pay) => h('li', {}, `${model.WINDS[pay.from]} pays ${model.WINDS[pay.to]} ${pay.amount}`)))
        : h('p', {}, 'Nobody pays anybody.'));
  }

  function scoreCard(player, i, answer) {
    const s = answer.score;
    return h('section', { class: `score-card${calc.winner === i ? ' winner' : ''}`, 'aria-label': `${player.wind}\u2019s score` },
      h('h3', {}, player.wind, ' ', h('span', { class: 'calc-score' }, s.score)),
      handTiles({ sets: answer.sets, concealed: answer.concealed, bonus: player.hand.bonus }),
      answer.arrangements > 1 ? h('p', { class: 'muted' }, `The best of ${answer.arrangements} ways of arranging the hand.`) : null,
      h('table', { class: 'data' },
        h('caption', { class: 'visually-hidden' }, `${player.wind}\u2019s score, item by item`),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Item'), h('th', { scope: 'col' }, 'From'),
          h('th', { scope: 'col', class: 'num' }, 'Points'), h('th', { scope: 'col', class: 'num' }, 'Doubles'))),
        h('tbody', {}, s.items.map((it) => h('tr', {},
          h('td', {}, it.name),
          h('td', {}, it.set ? h('span', { class: 'set' }, setTiles(it.set).map((t) => tileElement(t, { small: true })))
            : (it.tiles ?? []).map((t) => tileElement(t, { small: true }))),
          h('td', { class: 'num' }, it.points || ''),
          h('td', { class: 'num' }, it.limit_percent ? `${it.limit_percent}% of the limit` : it.doubles || '')))),
        h('tfoot', {}, h('tr', {}, h('th', { scope: 'row', colspan: 2 }, 'Points, doubles'),
          h('td', { class: 'num' }, s.points), h('td', { class: 'num' }, s.doubles)))),
      h('details', {}, h('summary', {}, 'As the reference prints it'), h('pre', { class: 'lines' }, s.lines.join('\n'))));
  }

  async function scoreAll() {
    if (busy) return;
    const mine = ++round;
    results = [null, null, null, null];
    settlement = null;
    const problems = [];
    calc.players.forEach((p, i) => {
      if (p.mode === 'score') {
        const t = model.typedScore(p.typed);
        if (t.error) problems.push(`${p.wind}: ${t.error}`);
      } else {
        const why = model.notReady(calc, i);
        if (why) problems.push(`${p.wind}: ${why}`);
      }
    });
    if (calc.winner == null) problems.push('say who went Mah-Jong');
    if (problems.length) {
      message.textContent = `Not yet: ${problems.join('; ')}.`;
      renderResults();
      renderCards();
      return;
    }
    busy = true;
    scoreButton.disabled = true;
    message.textContent = 'Scoring\u2026';
    const answers = await Promise.all(calc.players.map(async (p, i) => {
      if (p.mode === 'score') return { typed: model.typedScore(p.typed).score };
      try {
        return { answer: await ctx.api('POST', '/score', model.scoreRequest(calc, i)) };
      } catch (e) {
        return { error: e.message ?? String(e) };
      }
    }));
    if (disposed || mine !== round) return;
    results = answers;
    const failed = answers.map((a, i) => (a.error ? `${calc.players[i].wind}: ${a.error}` : null)).filter(Boolean);
    if (!failed.length) {
      const scores = answers.map((a) => a.answer?.score.score ?? a.typed);
      const asked = model.settleRequest(calc, scores);
      if (asked.error) settlement = { error: asked.error };
      else {
        try {
          settlement = { answer: await ctx.api('POST', '/settle', asked.body), scores };
        } catch (e) {
          settlement = { error: e.message ?? String(e) };
        }
      }
    }
    if (disposed || mine !== round) return;
    busy = false;
    message.textContent = failed.length ? `The server refused: ${failed.join('; ')}` : settlement?.error ? `Not settled: ${settlement.error}` : 'Scored and settled.';
    render();
    renderResults();
    if (!failed.length) resultsBox.focus();
  }

  function loadExample() {
    calc = model.seed004Example();
    // The others' hands are not part of the example: their scores are typed, nothing.
    calc.players.forEach((p, i) => { if (i !== calc.winner) { p.mode = 'score'; p.typed = '0'; } });
    editing = calc.winner;
    syncControls();
    changed();
    announce('Seed 004\u2019s example loaded: South went out on a discard with three pungs of dragons.');
  }

  /** Puts the model's values into the controls that keep their own (typed) values. */
  function syncControls() {
    presetSelect.value = calc.preset;
    optionsText.value = Object.keys(calc.options).length ? JSON.stringify(calc.options) : '';
    optionsError.textContent = '';
    givenBox.checked = calc.given;
    extraHands.value = calc.extra_hands;
    doubleDice.checked = calc.double_dice;
    cards.forEach((c, i) => { c.typed.value = calc.players[i].typed; });
  }

  render();
  renderResults();
  ctx.api('GET', '/presets').then((list) => {
    if (disposed) return;
    presets = list.presets ?? [];
    fill(presetSelect, presets.map((p) => h('option', { value: p.name, title: p.description }, p.name)));
    if (!presets.some((p) => p.name === calc.preset) && presets.length) calc.preset = presets[0].name;
    presetSelect.value = calc.preset;
    render();
  }).catch((e) => {
    if (!disposed) message.textContent = `The rule presets could not be read: ${e.message ?? e}`;
  });

  return {
    dispose() { disposed = true; },
  };
}
