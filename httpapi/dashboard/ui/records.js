// The records of a collection on the Collections screen: a filter box,
// a table with sortable columns (id with a copy button, email, verified,
// up to three other fields, created), pages, a check box per row with
// "Delete selected" after a confirmation within the page, and a record
// opened in its side panel (recordpanel.js). sortNext is pure.

import { api, collectionPath } from './api.js';
import { busy, h, message, notice } from './dom.js';
import { field, quiet, showErrors } from './forms.js';
import { dateCell } from './dates.js';
import { drawer } from './drawer.js';
import { recordPanel, text } from './recordpanel.js';

const perPage = 20;

// sortNext is the sort after a click on the column key when the sort is
// cur: ascending first, then descending, then ascending again.
export function sortNext(cur, key) {
  return cur === key ? `-${key}` : key;
}

// columns are the table's columns of c: [key, label], the collection's
// own visible fields (presentable ones first, at most three) between
// verified and created.
function columns(c) {
  const own = (c.fields || []).filter((f) => f && !f.system && !f.hidden && !['autodate', 'file'].includes(f.type));
  own.sort((a, b) => Number(!!b.presentable) - Number(!!a.presentable));
  return [['id', 'ID'], ['email', 'Email'], ['verified', 'Verified'], ...own.slice(0, 3).map((f) => [f.name, f.name]), ['created', 'Created']];
}

async function copyID(btn, id) {
  try {
    await navigator.clipboard.writeText(id);
    btn.textContent = 'Copied';
  } catch {
    btn.textContent = 'Copy refused';
  }
  setTimeout(() => { btn.textContent = 'Copy'; }, 1500);
}

function cell(r, key) {
  if (key === 'created' || key === 'updated') return dateCell(r[key]);
  if (key === 'verified') return r.verified ? 'yes' : 'no';
  if (typeof r[key] === 'boolean') return r[key] ? 'true' : 'false';
  return text(r[key]);
}

// recordsView is the records of c inside the page host (the panels are
// added there).
export function recordsView(c, host) {
  const cols = columns(c);
  const st = { page: 1, filter: '', sort: '-created', gen: 0, items: [], selected: new Set() };
  const filterIn = field('filter', 'Filter', { id: 'rec-filter', attrs: { placeholder: 'email ~ "example" && verified = true', spellcheck: 'false' } });
  const search = h('form', { class: 'coll-search', role: 'search', 'aria-label': 'Filter records' });
  const note = notice(search);
  const rows = h('tbody');
  const head = h('tr');
  const pageInfo = h('span', { 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', class: 'plain', onclick: () => { st.page--; load(); } }, 'Previous');
  const next = h('button', { type: 'button', class: 'plain', onclick: () => { st.page++; load(); } }, 'Next');
  const all = h('input', { type: 'checkbox', id: 'rec-all', 'aria-label': 'Select all records of this page' });
  const bulk = bulkBar(c, st, () => load());
  const open = (r, opener) => {
    const d = drawer(host, r ? `Record ${text(r.email || r.id)}` : `New record of ${text(c.name)}`, recordPanel(c, r, (msg) => {
      d.close();
      if (!msg) return;
      note.show(message('status', msg));
      // The list is drawn again: the focus goes back to the record's row,
      // or to New record when the row is gone.
      load().then(() => {
        const back = r && rows.querySelector(`tr[data-id="${CSS.escape(String(r.id))}"] button.link`);
        if (!document.activeElement || document.activeElement === document.body) (back || create).focus();
      });
    }), null, opener);
  };
  const drawHead = () => head.replaceChildren(h('th', { scope: 'col', class: 'sel' }, all), ...cols.map(([k, l]) => {
    const dir = st.sort === k ? 'ascending' : st.sort === `-${k}` ? 'descending' : null;
    return h('th', { scope: 'col', 'aria-sort': dir },
      h('button', { type: 'button', class: 'sort', onclick: () => { st.sort = sortNext(st.sort, k); st.page = 1; drawHead(); load(); } },
        l, h('span', { 'aria-hidden': 'true' }, dir === 'ascending' ? ' ▲' : dir === 'descending' ? ' ▼' : '')));
  }));
  const row = (r) => {
    const box = h('input', { type: 'checkbox', 'aria-label': `Select ${text(r.email || r.id)}`, checked: st.selected.has(r.id) });
    box.addEventListener('change', () => { if (box.checked) st.selected.add(r.id); else st.selected.delete(r.id); bulk.draw(); });
    const copy = h('button', { type: 'button', class: 'plain small', 'aria-label': `Copy the id ${text(r.id)}` }, 'Copy');
    copy.addEventListener('click', () => copyID(copy, text(r.id)));
    return h('tr', { 'data-id': text(r.id) }, h('td', { class: 'sel' }, box), cols.map(([k, l]) => h('td', { 'data-label': l, 'data-key': k },
      k === 'id' ? [h('code', null, text(r.id)), ' ', copy]
        : k === 'email' ? h('button', { type: 'button', class: 'link', onclick: (e) => open(r, e.currentTarget) }, text(r.email) || '(no email)')
          : cell(r, k))));
  };
  all.addEventListener('change', () => {
    for (const r of st.items) if (all.checked) st.selected.add(r.id); else st.selected.delete(r.id);
    for (const b of rows.querySelectorAll('td.sel input')) b.checked = all.checked;
    bulk.draw();
  });
  const load = async () => {
    const gen = ++st.gen;
    const q = new URLSearchParams({ page: String(st.page), perPage: String(perPage), sort: st.sort });
    if (st.filter) q.set('filter', st.filter);
    try {
      const res = await api('GET', `${collectionPath(c.name, 'records')}?${q}`);
      if (gen !== st.gen) return;
      st.items = res.items || [];
      st.selected = new Set([...st.selected].filter((id) => st.items.some((r) => r.id === id)));
      rows.replaceChildren(...st.items.map(row));
      if (!st.items.length) rows.replaceChildren(h('tr', null, h('td', { colspan: String(cols.length + 1), class: 'empty' }, st.filter ? 'No record matches the filter.' : 'No record yet.')));
      all.checked = st.items.length > 0 && st.items.every((r) => st.selected.has(r.id));
      const pages = Math.max(1, res.totalPages || 1);
      pageInfo.textContent = `Page ${res.page || st.page} of ${pages} (${res.totalItems || 0} records)`;
      prev.disabled = st.page <= 1;
      next.disabled = st.page >= pages;
      bulk.draw();
    } catch (err) {
      if (gen === st.gen) note.show(showErrors(err, [filterIn], quiet));
    }
  };
  const go = h('button', { type: 'submit' }, 'Search');
  search.addEventListener('submit', (e) => {
    e.preventDefault();
    st.filter = filterIn.input.value.trim();
    st.page = 1;
    busy(go, load);
  });
  search.append(h('div', { class: 'row' }, filterIn.row, go));
  drawHead();
  load();
  const create = h('button', { type: 'button', onclick: () => open(null, create) }, 'New record');
  return h('section', { class: 'records', 'aria-label': `Records of ${text(c.name)}` }, search, note.slot,
    h('div', { class: 'coll-actions' }, create, bulk.node),
    h('div', { class: 'coll-table-wrap' }, h('table', { class: 'coll-table' }, h('thead', null, head), rows)),
    h('div', { class: 'coll-pager' }, prev, pageInfo, next));
}

// bulkBar is "Delete selected (N)" and the question it asks first;
// deleted() follows the deletes.
function bulkBar(c, st, deleted) {
  const ask = h('button', { type: 'button', class: 'plain', hidden: true });
  const out = notice(null);
  const yes = h('button', { type: 'button', class: 'danger' }, 'Delete them');
  const no = h('button', { type: 'button', class: 'plain' }, 'Keep them');
  const q = h('p');
  const confirm = h('div', { class: 'rule-ask', role: 'group', 'aria-label': 'Delete the selected records?', hidden: true }, q, h('div', { class: 'coll-actions' }, yes, no));
  const draw = () => {
    const n = st.selected.size;
    ask.hidden = n === 0;
    ask.textContent = `Delete selected (${n})`;
    if (n === 0) confirm.hidden = true;
  };
  ask.addEventListener('click', () => {
    q.textContent = `Delete ${st.selected.size} record(s) of ${text(c.name)}? This cannot be undone.`;
    confirm.hidden = false;
    yes.focus();
  });
  no.addEventListener('click', () => { confirm.hidden = true; ask.focus(); });
  yes.addEventListener('click', async () => {
    const ids = [...st.selected];
    let done = 0;
    let failure = null;
    await busy(yes, async () => {
      for (const id of ids) {
        try {
          await api('DELETE', `${collectionPath(c.name, 'records')}/${encodeURIComponent(id)}`);
          st.selected.delete(id);
          done++;
        } catch (err) {
          failure = err;
          break;
        }
      }
    });
    confirm.hidden = true;
    out.show(failure ? message('alert', `Deleted ${done} of ${ids.length}: ${failure.message}`)
      : message('status', `${done} record(s) deleted.`));
    draw();
    deleted();
  });
  return { node: h('div', { class: 'bulk' }, ask, confirm, out.slot), draw };
}
