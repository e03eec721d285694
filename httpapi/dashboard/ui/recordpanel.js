// A record's side panel on the Collections screen: the form that creates
// or edits it (the auth fields, then a text input per other field), and
// for a stored record its id and dates, delete after a confirmation,
// send a verification or a password reset mail, impersonate for a
// duration (copy the token), and its linked OAuth2 accounts. Every value
// from the server is set as text or an attribute value.

import { api, collectionPath } from './api.js';
import { busy, h, message, notice } from './dom.js';
import { clearErrors, field, quiet, showErrors } from './forms.js';
import { linkedAccounts } from './colloauth.js';
import { dateCell } from './dates.js';

// The fields of an auth collection the form shows by name; the others of
// the collection's schema get a text input each.
const authFields = new Set(['id', 'email', 'emailVisibility', 'verified', 'password', 'tokenKey', 'created', 'updated']);

// text is v as a field's value or a cell's text.
export function text(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

// recordForm is the fields of a record of c with the values of r (null for
// a new one): the auth fields, then an input per other field.
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
    const opts = { id: `rec-f-${f.name}`, attrs: { value: text(v[f.name]) } };
    if (f.type === 'bool') Object.assign(opts, { type: 'checkbox', attrs: { checked: !!v[f.name] } });
    const fl = field(f.name, text(f.name), opts);
    fl.kind = f.type;
    fields.push(fl);
  }
  return fields;
}

// formValues reads the fields: checkboxes as booleans, numbers parsed
// when they parse, the rest as text; an empty password is left out of an
// edit.
function formValues(fields, edit) {
  const out = {};
  for (const f of fields) {
    if (f.input.type === 'checkbox') out[f.key] = f.input.checked;
    else if (edit && (f.key === 'password' || f.key === 'passwordConfirm') && !f.input.value) continue;
    else if (f.kind === 'number') {
      const n = Number(f.input.value);
      out[f.key] = f.input.value.trim() === '' ? null : Number.isNaN(n) ? f.input.value : n;
    } else out[f.key] = f.input.value;
  }
  return out;
}

// recordPanel creates (r null) or edits the record r of c; done(msg) is
// called after a save or a delete, and by Cancel (msg "").
export function recordPanel(c, r, done) {
  const fields = recordForm(c, r);
  const save = h('button', { type: 'submit' }, r ? 'Save' : 'Create');
  const form = h('form', { 'aria-label': r ? 'Edit record' : 'New record' });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors(fields);
    const path = r ? `${collectionPath(c.name, 'records')}/${encodeURIComponent(r.id)}` : collectionPath(c.name, 'records');
    try {
      await busy(save, () => api(r ? 'PATCH' : 'POST', path, formValues(fields, !!r)));
      done(r ? 'The record was saved.' : 'The record was created.');
    } catch (err) {
      note.show(showErrors(err, fields, quiet));
    }
  });
  form.append(...fields.map((f) => f.row), note.slot, h('div', { class: 'coll-actions' }, save,
    h('button', { type: 'button', class: 'plain', onclick: () => done('') }, 'Cancel')));
  if (!r) return h('div', { class: 'rec-panel' }, form);
  const info = h('dl', { class: 'rec-info' }, h('dt', null, 'ID'), h('dd', null, text(r.id)),
    h('dt', null, 'Created'), h('dd', null, dateCell(r.created)), h('dt', null, 'Updated'), h('dd', null, dateCell(r.updated)));
  return h('div', { class: 'rec-panel' }, info, form, recordActions(c, r), impersonateForm(c, r), linkedAccounts(c, r), deleteForm(c, r, done));
}

// deleteForm asks for a confirmation (a second button) before deleting.
function deleteForm(c, r, done) {
  const confirm = h('button', { type: 'submit', class: 'danger', hidden: true }, 'Confirm delete');
  const ask = h('button', { type: 'button', class: 'plain', onclick: () => { confirm.hidden = false; ask.hidden = true; confirm.focus(); } }, 'Delete record');
  const form = h('form', { 'aria-label': 'Delete record' });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await busy(confirm, () => api('DELETE', `${collectionPath(c.name, 'records')}/${encodeURIComponent(r.id)}`));
      done('The record was deleted.');
    } catch (err) {
      note.show(message('alert', err.message));
    }
  });
  form.append(h('div', { class: 'coll-actions' }, ask, confirm), note.slot);
  return form;
}

// recordActions sends the record a verification or a password reset mail.
function recordActions(c, r) {
  const out = notice(null);
  const send = (action, label, done) => {
    const btn = h('button', { type: 'button', class: 'plain' }, label);
    btn.addEventListener('click', async () => {
      try {
        await busy(btn, () => api('POST', collectionPath(c.name, action), { email: r.email }));
        out.show(message('status', done));
      } catch (err) {
        out.show(message('alert', err.message));
      }
    });
    return btn;
  };
  return h('section', { 'aria-label': 'Mails' }, h('div', { class: 'coll-actions' },
    r.verified ? null : send('request-verification', 'Send verification', `The server queued a verification mail to ${text(r.email)}.`),
    send('request-password-reset', 'Send password reset', `The server queued a password reset mail to ${text(r.email)}.`)), out.slot);
}

// impersonateForm gets a token for the record that lasts the duration
// given (0: the collection's auth token duration), and copies it.
function impersonateForm(c, r) {
  const dur = field('duration', 'Duration (seconds)', { id: 'imp-duration', type: 'number', attrs: { min: '0', value: '3600' } });
  const out = h('div');
  const go = h('button', { type: 'submit' }, 'Impersonate');
  const form = h('form', { 'aria-label': 'Impersonate' });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors([dur]);
    out.replaceChildren();
    try {
      const res = await busy(go, () => api('POST', collectionPath(c.name, `impersonate/${encodeURIComponent(r.id)}`),
        { duration: Number(dur.input.value) || 0 }));
      const tok = h('input', { id: 'imp-token', type: 'text', readonly: true, value: text(res && res.token) });
      const copied = h('p', { role: 'status' });
      const copy = h('button', { type: 'button', class: 'plain', onclick: async () => {
        try {
          await navigator.clipboard.writeText(tok.value);
          copied.textContent = 'Copied.';
        } catch {
          tok.select();
          copied.textContent = 'Select the token and copy it.';
        }
      } }, 'Copy token');
      out.replaceChildren(h('div', { class: 'field' }, h('label', { for: 'imp-token' }, 'Token'), tok), copy, copied);
    } catch (err) {
      note.show(showErrors(err, [dur], quiet));
    }
  });
  form.append(h('h3', null, 'Impersonate'), dur.row, go, note.slot, out);
  return form;
}
