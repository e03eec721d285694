// The Collections screen, in PocketBase's shape: the auth collections in
// a sidebar (searchable; a new one created there), the chosen one's
// records as the main table (records.js), its settings in a side panel
// (collsettings.js). #/collections?collection=NAME chooses one, and the
// hash follows the choice, so a reload keeps it. Every value from the
// server is set as text or an attribute value.

import { api } from './api.js';
import { h, message, stylesheet } from './dom.js';
import { createCollection } from './collopts.js';
import { openSettings } from './collsettings.js';
import { recordsView } from './records.js';

// wanted is the collection the hash names (#/collections?collection=N).
function wanted() {
  const q = location.hash.split('?')[1] || '';
  return new URLSearchParams(q).get('collection') || '';
}

function remember(name) {
  const hash = name ? `#/collections?collection=${encodeURIComponent(name)}` : '#/collections';
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

// collectionsPage builds the screen and loads the auth collections.
export function collectionsPage() {
  stylesheet('collections.css');
  const st = { list: [], current: null };
  const search = h('input', { id: 'coll-search', type: 'search', autocomplete: 'off', placeholder: 'Search collections', 'aria-label': 'Search collections' });
  const picker = h('nav', { class: 'coll-pick', 'aria-label': 'Auth collections' });
  const alert = h('div');
  const main = h('div', { class: 'coll-main' });
  const node = h('main', { class: 'page coll' });
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const shown = st.list.filter((c) => String(c.name).toLowerCase().includes(q));
    const item = (c) => h('li', null, h('button', {
      type: 'button', class: 'plain', 'aria-current': st.current && st.current.id === c.id ? 'true' : null, onclick: () => open(c),
    }, String(c.name)));
    const own = shown.filter((c) => !c.system);
    const sys = shown.filter((c) => c.system);
    picker.replaceChildren(...[h('ul', null, own.map(item)), sys.length ? [h('h2', { class: 'coll-group' }, 'System'), h('ul', null, sys.map(item))] : [],
      shown.length ? [] : h('p', { class: 'hint' }, q ? 'No collection matches.' : 'No auth collection.')].flat());
  };
  const settings = h('button', { type: 'button', class: 'plain', id: 'coll-settings' }, 'Settings');
  const open = (c) => {
    st.current = c;
    remember(c ? c.name : '');
    draw();
    if (!c) {
      main.replaceChildren();
      return;
    }
    main.replaceChildren(h('div', { class: 'coll-head' }, h('h2', { id: 'coll-title' }, String(c.name)),
      h('span', { class: 'hint' }, c.system ? 'system auth collection' : 'auth collection'), settings), recordsView(c, node));
  };
  settings.addEventListener('click', () => openSettings(node, st.current, st.list, {
    changed: (c) => { draw(); remember(c.name); main.querySelector('#coll-title').textContent = String(c.name); },
    deleted: () => reload(''),
    opener: settings,
  }));
  // reload lists the collections again and opens the one named pick
  // (the first if there is no such one and first is true).
  const reload = async (pick, first = true) => {
    try {
      const res = await api('GET', '/api/collections?perPage=500');
      st.list = (Array.isArray(res) ? res : (res && res.items) || []).filter((c) => c && c.type === 'auth');
      alert.replaceChildren();
      const c = st.list.find((x) => x.name === pick) || (first || !pick ? st.list.find((x) => !x.system) || st.list[0] : null);
      if (pick && !st.list.some((x) => x.name === pick)) alert.replaceChildren(message('alert', `There is no auth collection ${pick}.`));
      open(c || null);
    } catch (err) {
      alert.replaceChildren(message('alert', err.message));
    }
  };
  search.addEventListener('input', draw);
  reload(wanted(), false);
  node.append(h('h1', { tabindex: '-1', class: 'visually-hidden' }, 'Collections'), alert, h('div', { class: 'coll-layout' },
    h('aside', { class: 'coll-side', 'aria-label': 'Collections' }, h('p', { class: 'coll-side-title' }, 'Collections'), search, picker,
      createCollection((c) => reload(c.name))),
    main));
  return { title: 'Collections', node };
}
