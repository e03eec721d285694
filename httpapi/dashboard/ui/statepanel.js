// statePanel: a section that shows the state of a background task read
// from one superuser route (the log export's, the continuous backup's):
// a heading with a Refresh button, then a summary line and a list of
// fields, or one line when the task is off. Values are text nodes.

import { api } from './api.js';
import { dateCell } from './dates.js';
import { busy, h, message } from './dom.js';

// valueNode draws a field's value: a string as it is, {date} as a date,
// {text, date} as the text with its date in brackets.
function valueNode(v) {
  if (typeof v === 'string') return v;
  if (v.text === undefined) return dateCell(v.date);
  return [v.text, v.date ? [' (', dateCell(v.date), ')'] : null];
}

// statePanel returns the section, which loads the state at once.
//   path: the route (GET); title, id, level: the heading ('h2', 'h3');
//   cls: {section, body, head, summary, fields, hint, off}: class names;
//   rows(s): [[label, value, hint?]…], or null when the task is off;
//   summary(s): the summary line; offText: the line shown when off.
export function statePanel({ path, title, id, level, cls, rows, summary, offText }) {
  const body = h('div', { class: cls.body, 'aria-live': 'polite' });
  const refresh = h('button', { type: 'button', class: 'plain' }, 'Refresh');
  const el = h('section', { class: cls.section, 'aria-labelledby': id, 'aria-busy': 'true' },
    h('div', { class: cls.head }, h(level, { id }, title), refresh), body);
  const show = (s) => {
    const list = rows(s);
    if (!list) {
      body.replaceChildren(h('p', { class: cls.off }, offText));
      return;
    }
    body.replaceChildren(h('p', { class: cls.summary }, summary(s)),
      h('dl', { class: cls.fields }, list.map(([label, v, hint]) => [
        h('dt', null, label),
        h('dd', null, valueNode(v), hint ? h('span', { class: cls.hint }, hint) : null),
      ])));
  };
  const load = async () => {
    el.setAttribute('aria-busy', 'true');
    try {
      show(await api('GET', path));
    } catch (err) {
      body.replaceChildren(message('alert', err.message));
    } finally {
      el.removeAttribute('aria-busy');
    }
  };
  refresh.addEventListener('click', () => busy(refresh, load));
  load();
  return el;
}
