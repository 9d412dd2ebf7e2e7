// Game options for people: the server's catalogue (GET /api/v1/options:
// label, description, type, default, bounds, words), each option drawn as
// the control its type calls for (a checkbox, a number field with its
// bounds, a list of words or allowed values, doubles and points for a
// score), and the presets' names in words.

import { api } from './api.js';
import { h } from './dom.js';

let catalogue = null;

/** The option catalogue, asked of the server once per page. */
export async function optionCatalogue() {
  catalogue ??= api('GET', '/options').then((c) => c.options).catch((err) => { catalogue = null; throw err; });
  return catalogue;
}

/** The options a table's manager most often changes, shown first. */
export const COMMON_OPTIONS = ['NumRounds', 'Timeout', 'TimeoutGrace', 'ScoreLimit', 'NoLimit', 'SevenPairs', 'Flowers', 'MinimumDoubles'];

/** A score option's value (limits*1000000 + doubles*10000 + points) in its parts. */
export function scoreParts(value) {
  const v = Number(value) || 0;
  return { limits: Math.floor(v / 1000000), doubles: Math.floor((v % 1000000) / 10000), points: v % 10000 };
}

/** A score option's value in words: "20 points", "1 double", "a limit". */
export function scoreWords(value) {
  const { limits, doubles, points } = scoreParts(value);
  const parts = [];
  if (limits) parts.push(limits === 1 ? 'a limit' : `${limits} limits`);
  if (doubles) parts.push(`${doubles} double${doubles === 1 ? '' : 's'}`);
  if (points || !parts.length) parts.push(`${points} point${points === 1 ? '' : 's'}`);
  return parts.join(' + ');
}

/** A value as the server writes it in events ("1", "up") made natural for a control. */
function natural(entry, value) {
  if (entry.type === 'bool') return value === true || value === 1 || value === '1' || value === 'true';
  if (entry.type === 'string') return String(value);
  return Number(value);
}

/**
 * The control for one option at `value`; `onChange(value)` gets the new
 * value in its natural JSON type. `id` names the control (for its label).
 */
export function optionControl(entry, value, onChange, id = `option-${entry.name}`) {
  const v = natural(entry, value ?? entry.default);
  const title = `${entry.description} (${entry.name}; default ${entry.type === 'score' ? scoreWords(entry.default) : entry.default})`;
  if (entry.type === 'bool') {
    const box = h('input', { type: 'checkbox', id, checked: v, dataset: { option: entry.name } });
    box.addEventListener('change', () => onChange(box.checked));
    return h('label', { class: 'option', title }, box, entry.label);
  }
  let control;
  if (entry.type === 'string' || entry.allowed) {
    const choices = entry.words ?? entry.allowed;
    control = h('select', { id, dataset: { option: entry.name } }, choices.map((c) => h('option', { value: c, selected: c === v }, String(c))));
    control.addEventListener('change', () => onChange(entry.words ? control.value : Number(control.value)));
  } else if (entry.type === 'score') {
    // Doubles and points, the two parts people use (limits stay as they are).
    const parts = scoreParts(v);
    const doubles = h('input', { type: 'number', min: 0, max: 99, value: parts.doubles, id, 'aria-label': `${entry.label}: doubles`, dataset: { option: entry.name } });
    const points = h('input', { type: 'number', min: 0, max: 9999, value: parts.points, 'aria-label': `${entry.label}: points` });
    const send = () => onChange(parts.limits * 1000000 + Number(doubles.value || 0) * 10000 + Number(points.value || 0));
    doubles.addEventListener('change', send);
    points.addEventListener('change', send);
    control = h('span', { class: 'score-parts' }, doubles, ' doubles + ', points, ' points');
  } else {
    control = h('input', { type: 'number', id, value: v, min: entry.min ?? null, max: entry.max ?? null, dataset: { option: entry.name } });
    control.addEventListener('change', () => onChange(Number(control.value)));
  }
  return h('span', { class: 'option', title }, h('label', { for: id }, entry.label), ' ', control);
}

/** A preset's name in words: "japanese-rounding" → "Japanese rounding". */
export function presetTitle(name) {
  const words = name.replace(/[-_]+/g, ' ').trim();
  return words ? `${words[0].toUpperCase()}${words.slice(1)}` : name;
}
