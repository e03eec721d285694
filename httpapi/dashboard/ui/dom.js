// Building the DOM without HTML strings: every text, from data or not, is
// a text node, so nothing a server or a log holds can become markup.

// h creates an element with attributes (on* keys add listeners; true sets
// an empty attribute; null, undefined and false are left out) and children
// (nodes, or strings that become text nodes).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// busy marks a submit button as working (disabled, aria-busy) while fn
// runs. Starting it clears every notice (see notice) on the screen: a
// banner speaks of the last action only.
export async function busy(button, fn) {
  clearNotices();
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await fn();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

// message returns a paragraph with the role "alert" (errors) or "status"
// (successes) holding text.
export function message(role, text) {
  return h('p', { role }, text);
}

// notices are the banners notice made that are in the document.
const notices = new Set();

function clearNotices() {
  for (const slot of notices) {
    if (slot.isConnected) slot.replaceChildren();
    else notices.delete(slot);
  }
}

// notice returns the place of a form's banner: slot, an element to put
// where the banner goes, show(node), which puts node (a message) there in
// place of the last one, and clear(). Any input or change in form, and the
// start of any action (busy), clear it: a "saved" or an error is never left
// standing beside values it no longer describes.
export function notice(form) {
  const slot = h('div', { class: 'notice' });
  notices.add(slot);
  const clear = () => slot.replaceChildren();
  if (form) {
    form.addEventListener('input', clear);
    form.addEventListener('change', clear);
  }
  return { slot, show: (node) => slot.replaceChildren(node), clear };
}

// stylesheet adds the stylesheet name (a file beside the modules, such as
// logs.css) to the document once: the rules of a screen, loaded when the
// screen is first shown.
export function stylesheet(name) {
  const id = `${name.replace(/\.css$/, '')}-css`;
  if (document.getElementById(id)) return;
  document.head.append(h('link', { id, rel: 'stylesheet', href: new URL(name, import.meta.url).pathname }));
}
