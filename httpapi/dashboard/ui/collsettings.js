// A collection's settings, in a side panel of the Collections screen:
// its name (rename), then tabs (Fields, API rules, Options), the Options
// tab ending with the deletion of the collection. tabs is a small ARIA
// tab list: the arrow keys, Home and End move between the tabs.

import { h } from './dom.js';
import { drawer } from './drawer.js';
import { fieldsTab } from './fields.js';
import { rulesTab } from './rules.js';
import { deleteCollection, optionsTab, renameForm } from './collopts.js';

// tabs builds a tab list of [id, label, make] (make builds the panel's
// content when the tab is chosen) and its panel; it returns {node, select}.
export function tabs(label, list, first = list[0][0]) {
  const panel = h('div', { class: 'tab-panel', role: 'tabpanel', tabindex: '0' });
  const bar = h('div', { class: 'tabs', role: 'tablist', 'aria-label': label });
  const buttons = list.map(([id, text]) => h('button', {
    type: 'button', role: 'tab', id: `tab-${id}`, 'aria-controls': 'tab-panel', class: 'tab', onclick: () => select(id),
  }, text));
  panel.id = 'tab-panel';
  const select = (id, focus = false) => {
    const i = list.findIndex(([x]) => x === id);
    buttons.forEach((b, k) => {
      b.setAttribute('aria-selected', k === i ? 'true' : 'false');
      b.tabIndex = k === i ? 0 : -1;
    });
    panel.setAttribute('aria-labelledby', `tab-${id}`);
    panel.replaceChildren(list[i][2]());
    if (focus) buttons[i].focus();
  };
  bar.addEventListener('keydown', (e) => {
    const i = buttons.indexOf(document.activeElement);
    if (i < 0) return;
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: buttons.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    select(list[(to + buttons.length) % buttons.length][0], true);
  });
  bar.append(...buttons);
  select(first);
  return { node: h('div', { class: 'tabbed' }, bar, panel), select };
}

// openSettings opens the settings of c (all: every collection listed)
// in a panel inside host. changed(c) follows a save (c the collection
// answered; a rename too), deleted() the deletion (the panel closes).
export function openSettings(host, c, all, { changed, deleted, opener, tab = 'fields' }) {
  const keep = (res) => {
    if (res && typeof res === 'object') Object.assign(c, res);
    d.title.textContent = `Settings of ${c.name}`;
    changed(c);
  };
  const t = tabs(`Settings of ${c.name}`, [
    ['fields', 'Fields', () => fieldsTab(c, keep)],
    ['rules', 'API rules', () => rulesTab(c, all, keep)],
    ['options', 'Options', () => h('div', null, optionsTab(c, keep), deleteCollection(c, () => { d.close(); deleted(); }))],
  ], tab);
  const d = drawer(host, `Settings of ${c.name}`, h('div', { class: 'coll-settings' }, renameForm(c, keep), t.node), null, opener);
  return d;
}
