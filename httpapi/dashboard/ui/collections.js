// The Collections screen: the auth collections (GET /api/collections), and
// the records of the one picked: a list with a filter, a sort and pages,
// a form to create or edit one, delete with a confirmation, and per record
// send verification, send password reset and impersonate (copy the token).
// Every value from the server is set as text or an attribute value.

import { api, collectionPath } from './api.js';
import { busy, h, message, stylesheet } from './dom.js';
import { clearErrors, field, quiet, showErrors } from './forms.js';
import { createCollection, deleteCollection, optionsForm } from './collopts.js';
import { linkedAccounts, oauth2Form } from './colloauth.js';

const perPage = 20;
// The fields of an auth collection the form shows by name; the others of
// the collection's schema get a text input each.
const authFields = new Set(['id', 'email', 'emailVisibility', 'verified', 'password', 'tokenKey', 'created', 'updated']);

function text(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

// collectionsPage builds the screen and loads the auth collections.
export function collectionsPage() {
  stylesheet('collections.css');
  const picker = h('ul', { class: 'coll-pick', 'aria-label': 'Auth collections' });
  const alert = h('div');
  const body = h('div');
  const open = (c) => {
    for (const b of picker.querySelectorAll('button')) b.setAttribute('aria-pressed', b.textContent === c.name ? 'true' : 'false');
    body.replaceChildren(collectionView(c, reload));
  };
  // reload lists the collections again and opens the one named pick.
  const reload = async (pick) => {
    try {
      const res = await api('GET', '/api/collections?perPage=500');
      const list = (Array.isArray(res) ? res : (res && res.items) || []).filter((c) => c && c.type === 'auth');
      picker.replaceChildren(...list.map((c) => h('li', null,
        h('button', { type: 'button', class: 'plain', 'aria-pressed': 'false', onclick: () => open(c) }, text(c.name)))));
      alert.replaceChildren(list.length ? '' : message('status', 'No auth collection.'));
      const c = list.find((x) => x.name === pick);
      if (c) open(c);
      else body.replaceChildren();
    } catch (err) {
      alert.replaceChildren(message('alert', err.message));
    }
  };
  reload('');
  const node = h('main', { class: 'page coll' }, h('h1', { tabindex: '-1' }, 'Collections'), alert, picker, body,
    createCollection((c) => reload(c.name)));
  return { title: 'Collections', node };
}

// collectionView is one collection: its records, or its options.
function collectionView(c, reload) {
  const content = h('div');
  const tab = (label, make) => h('button', { type: 'button', class: 'plain', onclick: () => content.replaceChildren(make()) }, label);
  content.replaceChildren(recordsView(c));
  return h('div', null, h('div', { class: 'coll-actions' },
    tab('Records', () => recordsView(c)),
    tab('Options', () => h('div', null, optionsForm(c, (n) => { if (n.name !== c.name) reload(n.name); }), oauth2Form(c), deleteCollection(c, () => reload(''))))),
  content);
}

// recordsView is the records of the collection c: search, list, pages and
// the panel that creates or edits one.
function recordsView(c) {
  const st = { page: 1, filter: '', sort: '-created', gen: 0 };
  const alert = h('div');
  const panel = h('div');
  const rows = h('tbody');
  const pageInfo = h('span');
  const prev = h('button', { type: 'button', class: 'plain', onclick: () => { st.page--; load(); } }, 'Previous');
  const next = h('button', { type: 'button', class: 'plain', onclick: () => { st.page++; load(); } }, 'Next');
  const filterIn = field('filter', 'Filter', { id: 'rec-filter', attrs: { placeholder: 'email~"example"' } });
  const sortIn = field('sort', 'Sort', { id: 'rec-sort', attrs: { value: st.sort } });
  const searchBtn = h('button', { type: 'submit' }, 'Search');
  const load = async () => {
    const gen = ++st.gen;
    const q = new URLSearchParams({ page: String(st.page), perPage: String(perPage) });
    if (st.filter) q.set('filter', st.filter);
    if (st.sort) q.set('sort', st.sort);
    try {
      const res = await api('GET', `${collectionPath(c.name, 'records')}?${q}`);
      if (gen !== st.gen) return;
      alert.replaceChildren();
      rows.replaceChildren(...(res.items || []).map((r) => recordRow(r, () => panel.replaceChildren(recordPanel(c, r, done)))));
      const pages = Math.max(1, res.totalPages || 1);
      pageInfo.textContent = `Page ${res.page || st.page} of ${pages} (${res.totalItems || 0} records)`;
      prev.disabled = st.page <= 1;
      next.disabled = st.page >= pages;
    } catch (err) {
      if (gen === st.gen) alert.replaceChildren(showErrors(err, [filterIn, sortIn], quiet));
    }
  };
  const done = (msg) => {
    panel.replaceChildren(msg ? message('status', msg) : '');
    load();
  };
  const search = h('form', {
    class: 'coll-search', onsubmit: (e) => {
      e.preventDefault();
      st.filter = filterIn.input.value.trim();
      st.sort = sortIn.input.value.trim();
      st.page = 1;
      busy(searchBtn, load);
    },
  }, h('div', { class: 'row' }, filterIn.row, sortIn.row, searchBtn));
  const create = h('button', { type: 'button', onclick: () => panel.replaceChildren(recordPanel(c, null, done)) }, 'New record');
  const table = h('table', { class: 'coll-table' },
    h('thead', null, h('tr', null, ['ID', 'Email', 'Verified', 'Created', ''].map((t) => h('th', { scope: 'col' }, t)))), rows);
  load();
  return h('section', { 'aria-label': 'Records' }, h('h2', null, `Records of ${text(c.name)}`), search, alert,
    h('div', { class: 'coll-actions' }, create), panel, h('div', { class: 'coll-table-wrap' }, table), h('div', { class: 'coll-pager' }, prev, pageInfo, next));
}

function recordRow(r, edit) {
  return h('tr', { 'data-id': text(r.id) },
    h('td', null, text(r.id)), h('td', null, text(r.email)), h('td', null, r.verified ? 'yes' : 'no'),
    h('td', null, text(r.created)),
    h('td', null, h('button', { type: 'button', class: 'plain', onclick: edit, 'aria-label': `Edit ${text(r.email || r.id)}` }, 'Edit')));
}

// recordForm is the fields of a record of c with the values of r (null for
// a new one): the auth fields, then a text input per other field.
function recordForm(c, r) {
  const v = r || {};
  const fields = [
    field('email', 'Email', { id: 'rec-email', type: 'email', attrs: { value: text(v.email) } }),
    field('password', r ? 'New password' : 'Password', { id: 'rec-password', type: 'password', attrs: { autocomplete: 'new-password' } }),
    field('passwordConfirm', 'Confirm password', { id: 'rec-passwordConfirm', type: 'password', attrs: { autocomplete: 'new-password' } }),
    field('verified', 'Verified', { id: 'rec-verified', type: 'checkbox', attrs: { checked: !!v.verified } }),
    field('emailVisibility', 'Email visible', { id: 'rec-emailVisibility', type: 'checkbox', attrs: { checked: !!v.emailVisibility } }),
  ];
  const others = (c.fields || []).filter((f) => f && !authFields.has(f.name) && !['autodate', 'file', 'password'].includes(f.type) && !f.hidden);
  for (const f of others) {
    const fl = field(f.name, text(f.name), { id: `rec-f-${f.name}`, attrs: { value: text(v[f.name]) } });
    fl.kind = f.type;
    fields.push(fl);
  }
  return fields;
}

// formValues reads the fields: checkboxes as booleans, numbers, booleans
// and JSON fields parsed when they parse, the rest as text; an empty
// password is left out of an edit.
function formValues(fields, edit) {
  const out = {};
  for (const f of fields) {
    if (f.input.type === 'checkbox') out[f.key] = f.input.checked;
    else if (edit && (f.key === 'password' || f.key === 'passwordConfirm') && !f.input.value) continue;
    else if (['number', 'bool', 'json'].includes(f.kind)) {
      try {
        out[f.key] = f.input.value === '' ? null : JSON.parse(f.input.value);
      } catch {
        out[f.key] = f.input.value;
      }
    } else out[f.key] = f.input.value;
  }
  return out;
}

// recordPanel creates (r null) or edits the record r of c; done(msg) is
// called after a save or a delete.
function recordPanel(c, r, done) {
  const fields = recordForm(c, r);
  const alert = h('div');
  const save = h('button', { type: 'submit' }, r ? 'Save' : 'Create');
  const form = h('form', {
    'aria-label': r ? 'Edit record' : 'New record', onsubmit: async (e) => {
      e.preventDefault();
      alert.replaceChildren();
      clearErrors(fields);
      const path = r ? `${collectionPath(c.name, 'records')}/${encodeURIComponent(r.id)}` : collectionPath(c.name, 'records');
      try {
        await busy(save, () => api(r ? 'PATCH' : 'POST', path, formValues(fields, !!r)));
        done(r ? 'The record was saved.' : 'The record was created.');
      } catch (err) {
        alert.replaceChildren(showErrors(err, fields, quiet));
      }
    },
  }, fields.map((f) => f.row), alert, h('div', { class: 'coll-actions' }, save,
    h('button', { type: 'button', class: 'plain', onclick: () => done('') }, 'Cancel')));
  const title = h('h2', null, r ? `Record ${text(r.id)}` : 'New record');
  if (!r) return h('section', { class: 'coll-panel' }, title, form);
  return h('section', { class: 'coll-panel' }, title, form, deleteForm(c, r, done), recordActions(c, r),
    impersonateForm(c, r), linkedAccounts(c, r));
}

// deleteForm asks for a confirmation (a second button) before deleting.
function deleteForm(c, r, done) {
  const alert = h('div');
  const confirm = h('button', { type: 'submit', class: 'danger', hidden: true }, 'Confirm delete');
  const ask = h('button', { type: 'button', class: 'plain', onclick: () => { confirm.hidden = false; ask.hidden = true; confirm.focus(); } }, 'Delete record');
  return h('form', {
    'aria-label': 'Delete record', onsubmit: async (e) => {
      e.preventDefault();
      try {
        await busy(confirm, () => api('DELETE', `${collectionPath(c.name, 'records')}/${encodeURIComponent(r.id)}`));
        done('The record was deleted.');
      } catch (err) {
        alert.replaceChildren(message('alert', err.message));
      }
    },
  }, h('div', { class: 'coll-actions' }, ask, confirm), alert);
}

// recordActions sends the record a verification or a password reset mail.
function recordActions(c, r) {
  const out = h('div');
  const send = (action, done) => h('form', {
    onsubmit: async (e) => {
      e.preventDefault();
      try {
        await busy(e.submitter || e.target.querySelector('button'), () => api('POST', collectionPath(c.name, action), { email: r.email }));
        out.replaceChildren(message('status', done));
      } catch (err) {
        out.replaceChildren(message('alert', err.message));
      }
    },
  }, h('button', { type: 'submit', class: 'plain' }, action === 'request-verification' ? 'Send verification' : 'Send password reset'));
  return h('div', null, h('div', { class: 'coll-actions' },
    r.verified ? null : send('request-verification', 'A verification mail was sent.'),
    send('request-password-reset', 'A password reset mail was sent.')), out);
}

// impersonateForm gets a token for the record that lasts the duration
// given (0: the collection's auth token duration), and copies it.
function impersonateForm(c, r) {
  const dur = field('duration', 'Duration (seconds)', { id: 'imp-duration', type: 'number', attrs: { min: '0', value: '3600' } });
  const alert = h('div');
  const out = h('div');
  const go = h('button', { type: 'submit' }, 'Impersonate');
  return h('form', {
    'aria-label': 'Impersonate', onsubmit: async (e) => {
      e.preventDefault();
      alert.replaceChildren();
      clearErrors([dur]);
      out.replaceChildren();
      try {
        const res = await busy(go, () => api('POST', collectionPath(c.name, `impersonate/${encodeURIComponent(r.id)}`),
          { duration: Number(dur.input.value) || 0 }));
        const tok = h('input', { id: 'imp-token', type: 'text', readonly: true, value: text(res && res.token) });
        const copy = h('button', { type: 'button', class: 'plain', onclick: async () => {
          try {
            await navigator.clipboard.writeText(tok.value);
            copied.textContent = 'Copied.';
          } catch {
            tok.select();
            copied.textContent = 'Select the token and copy it.';
          }
        } }, 'Copy token');
        const copied = h('p', { role: 'status' });
        out.replaceChildren(h('div', { class: 'field' }, h('label', { for: 'imp-token' }, 'Token'), tok), copy, copied);
      } catch (err) {
        alert.replaceChildren(showErrors(err, [dur], quiet));
      }
    },
  }, h('h3', null, 'Impersonate'), dur.row, go, alert, out);
}
