// Small DOM helpers shared by the screens.

/**
 * Makes an element: `h('button', {class: 'primary', onclick: f}, 'Text', child)`.
 * Attributes starting with `on` become listeners; `dataset` and `style`
 * objects are assigned; null, false and undefined children are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'class') el.className = v;
    // Through the CSSOM: the page's CSP refuses inline style attributes.
    else if (k === 'style') el.style.cssText = v;
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Says something to screen readers, politely (the page's live region). */
export function announce(text) {
  const region = document.getElementById('announcer');
  if (!region) return;
  const p = document.createElement('p');
  p.textContent = text;
  region.append(p);
  while (region.childElementCount > 5) region.firstElementChild.remove();
}

let toastTimer = null;
/** Shows a short message at the bottom of the screen. */
export function toast(text, ms = 4000) {
  const el = document.getElementById('toast');
  if (!el) return;
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, ms);
}

/** A button with a keyboard accelerator: the letter is underlined and kept in data-key. */
export function keyButton(label, key, onclick, attrs = {}) {
  const i = key ? label.toLowerCase().indexOf(key.toLowerCase()) : -1;
  const text = i < 0 ? [label] : [label.slice(0, i), h('span', { class: 'key' }, label[i]), label.slice(i + 1)];
  return h('button', { ...attrs, onclick, dataset: { key: key ?? '', ...(attrs.dataset ?? {}) }, 'aria-keyshortcuts': key ? key.toUpperCase() : null }, ...text);
}

/** Seat names of the winds, for people. */
export const WIND_LETTER = { East: 'E', South: 'S', West: 'W', North: 'N' };
