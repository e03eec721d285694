// The options of an auth collection on the Collections screen: one form
// for its name, API rules (the filter language; "Superusers only" is a
// null rule), password auth and identity fields, OTP, MFA and its rule,
// the new-login alert, token durations and mail templates, saved with
// PATCH /api/collections/{id}; and deleting the collection after typing
// its name. Every value is set as text or an attribute value.

import { api, APIError } from './api.js';
import { busy, h, message } from './dom.js';

const rules = ['listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule', 'authRule', 'manageRule'];
const tokens = ['authToken', 'passwordResetToken', 'emailChangeToken', 'verificationToken', 'fileToken'];
const templates = [['verificationTemplate', 'Verification mail'], ['resetPasswordTemplate', 'Password reset mail'],
  ['confirmEmailChangeTemplate', 'Email change mail'], ['otp.emailTemplate', 'OTP mail'], ['authAlert.emailTemplate', 'New login alert mail']];

// The form's fields: [path in the collection, label, kind].
const spec = [
  ['name', 'Name', 'text'],
  ...rules.map((r) => [r, r, 'rule']),
  ['passwordAuth.enabled', 'Password auth enabled', 'bool'],
  ['passwordAuth.identityFields', 'Identity fields (comma separated)', 'list'],
  ['otp.enabled', 'OTP enabled', 'bool'], ['otp.duration', 'OTP duration (seconds)', 'number'], ['otp.length', 'OTP length', 'number'],
  ['mfa.enabled', 'MFA enabled', 'bool'], ['mfa.duration', 'MFA duration (seconds)', 'number'], ['mfa.rule', 'MFA rule', 'text'],
  ['authAlert.enabled', 'New login alert enabled', 'bool'],
  ...tokens.map((t) => [`${t}.duration`, `${t} duration (seconds)`, 'number']),
  ...templates.flatMap(([p, l]) => [[`${p}.subject`, `${l} subject`, 'text'], [`${p}.body`, `${l} body`, 'textarea']]),
];

function get(obj, path) {
  return path.split('.').reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), obj);
}

function set(obj, path, v) {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) o = o[k] = o[k] && typeof o[k] === 'object' ? o[k] : {};
  o[keys[keys.length - 1]] = v;
}

function idOf(path) {
  return 'opt-' + path.replace(/\./g, '-');
}

// fieldError returns the envelope's message for the field at path (the
// data of a nested option is nested, as PocketBase answers).
function fieldError(err, path) {
  const f = err instanceof APIError ? get(err.data, path) : null;
  return f && typeof f === 'object' && typeof f.message === 'string' ? f.message : '';
}

// optField is the input of one option with its error element.
function optField(c, [path, label, kind]) {
  const id = idOf(path);
  const v = get(c, path);
  const err = h('p', { id: `err-${id}`, class: 'field-error' });
  const attrs = { id, name: path, 'aria-describedby': `err-${id}` };
  if (kind === 'bool') {
    const input = h('input', { ...attrs, type: 'checkbox', checked: !!v });
    return { path, kind, input, wrap: h('div', null, h('div', { class: 'check' }, input, h('label', { for: id }, label)), err) };
  }
  if (kind === 'rule') {
    const input = h('input', { ...attrs, type: 'text', value: v === null || v === undefined ? '' : String(v) });
    const locked = h('input', { id: `${id}-locked`, type: 'checkbox', checked: v === null || v === undefined });
    return {
      path, kind, input, locked, wrap: h('div', { class: 'field' }, h('label', { for: id }, label), input,
        h('div', { class: 'check' }, locked, h('label', { for: `${id}-locked` }, `${label}: superusers only`)), err),
    };
  }
  const value = kind === 'list' ? (Array.isArray(v) ? v.join(', ') : '') : v === null || v === undefined ? '' : String(v);
  const input = kind === 'textarea' ? h('textarea', { ...attrs, rows: 4 }, value)
    : h('input', { ...attrs, type: kind === 'number' ? 'number' : 'text', value });
  return { path, kind, input, wrap: h('div', { class: 'field' }, h('label', { for: id }, label), input, err) };
}

function optValue(f) {
  if (f.kind === 'bool') return f.input.checked;
  if (f.kind === 'rule') return f.locked.checked ? null : f.input.value;
  if (f.kind === 'number') return Number(f.input.value);
  if (f.kind === 'list') return f.input.value.split(',').map((s) => s.trim()).filter(Boolean);
  return f.input.value;
}

// optionsForm edits the collection c; saved(c) is called with the
// collection the server answers.
export function optionsForm(c, saved) {
  const fields = spec.map((s) => optField(c, s));
  const alert = h('div');
  const save = h('button', { type: 'submit' }, 'Save options');
  return h('form', {
    class: 'coll-panel', 'aria-label': 'Collection options', onsubmit: async (e) => {
      e.preventDefault();
      alert.replaceChildren();
      const body = {};
      for (const f of fields) set(body, f.path, optValue(f));
      try {
        const res = await busy(save, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, body));
        for (const f of fields) document.getElementById(`err-${idOf(f.path)}`).textContent = '';
        alert.replaceChildren(message('status', 'The options were saved.'));
        saved(res);
      } catch (err) {
        for (const f of fields) document.getElementById(`err-${idOf(f.path)}`).textContent = fieldError(err, f.path);
        alert.replaceChildren(message('alert', err.message));
      }
    },
  }, h('h2', null, `Options of ${String(c.name)}`), fields.map((f) => f.wrap),
  h('p', { class: 'hint' }, 'Mail placeholders: {APP_NAME}, {APP_URL}, {TOKEN}, {OTP}, {OTP_ID}, {RECORD:fieldName}.'), alert, save);
}

// deleteCollection deletes c once its name is typed; deleted() follows.
export function deleteCollection(c, deleted) {
  const name = h('input', { id: 'del-coll-name', type: 'text', autocomplete: 'off', 'aria-describedby': 'err-del-coll-name' });
  const err = h('p', { id: 'err-del-coll-name', class: 'field-error' });
  const alert = h('div');
  const go = h('button', { type: 'submit', class: 'danger' }, 'Delete collection');
  return h('form', {
    class: 'coll-panel', 'aria-label': 'Delete collection', onsubmit: async (e) => {
      e.preventDefault();
      err.textContent = '';
      if (name.value !== c.name) {
        err.textContent = 'Type the collection\'s name to confirm.';
        return;
      }
      try {
        await busy(go, () => api('DELETE', `/api/collections/${encodeURIComponent(c.id)}`));
        deleted();
      } catch (e2) {
        alert.replaceChildren(message('alert', e2.message));
      }
    },
  }, h('h2', null, 'Delete collection'), h('div', { class: 'field' },
    h('label', { for: 'del-coll-name' }, `Type ${String(c.name)} to confirm`), name, err), alert, go);
}

// createCollection creates an auth collection by name; created(c) follows.
export function createCollection(created) {
  const name = h('input', { id: 'new-coll-name', type: 'text', autocomplete: 'off', 'aria-describedby': 'err-new-coll-name' });
  const err = h('p', { id: 'err-new-coll-name', class: 'field-error' });
  const alert = h('div');
  const go = h('button', { type: 'submit' }, 'Create collection');
  return h('form', {
    class: 'coll-panel', 'aria-label': 'New auth collection', onsubmit: async (e) => {
      e.preventDefault();
      err.textContent = '';
      alert.replaceChildren();
      try {
        const c = await busy(go, () => api('POST', '/api/collections', { name: name.value.trim(), type: 'auth' }));
        created(c);
      } catch (e2) {
        err.textContent = e2 instanceof APIError ? e2.fieldMessage('name') : '';
        alert.replaceChildren(message('alert', e2.message));
      }
    },
  }, h('div', { class: 'field' }, h('label', { for: 'new-coll-name' }, 'New auth collection name'), name, err), alert, go);
}
