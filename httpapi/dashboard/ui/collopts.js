// The options of an auth collection on the Collections screen: one form
// for its name, API rules (the filter language; "Superusers only" is a
// null rule), password auth and identity fields, OTP, MFA and its rule,
// the new-login alert, token durations and mail templates, saved with
// PATCH /api/collections/{id}; and deleting the collection after typing
// its name. Every value is set as text or an attribute value.

import { api } from './api.js';
import { busy, h, message } from './dom.js';
import { clearErrors, field, quiet, showErrors } from './forms.js';

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

// optField is the field of one option (see field), whose error is the
// envelope's at its path (the data of a nested option is nested, as
// PocketBase answers). A rule has a second box, "superusers only" (a null
// rule).
function optField(c, [path, label, kind]) {
  const id = idOf(path);
  const v = get(c, path);
  const str = v === null || v === undefined ? '' : String(v);
  if (kind === 'bool') return { kind, ...field(path, label, { id, type: 'checkbox', attrs: { checked: !!v } }) };
  if (kind === 'rule') {
    const locked = h('input', { id: `${id}-locked`, type: 'checkbox', checked: v === null || v === undefined });
    const after = h('div', { class: 'check' }, locked, h('label', { for: `${id}-locked` }, `${label}: superusers only`));
    return { kind, locked, ...field(path, label, { id, attrs: { value: str }, after }) };
  }
  if (kind === 'textarea') return { kind, ...field(path, label, { id, type: 'textarea', value: str, attrs: { rows: 4 } }) };
  const value = kind === 'list' ? (Array.isArray(v) ? v.join(', ') : '') : str;
  return { kind, ...field(path, label, { id, type: kind === 'number' ? 'number' : 'text', attrs: { value } }) };
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
      for (const f of fields) set(body, f.key, optValue(f));
      try {
        const res = await busy(save, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, body));
        clearErrors(fields);
        alert.replaceChildren(message('status', 'The options were saved.'));
        saved(res);
      } catch (err) {
        alert.replaceChildren(showErrors(err, fields, quiet));
      }
    },
  }, h('h2', null, `Options of ${String(c.name)}`), fields.map((f) => f.row),
  h('p', { class: 'hint' }, 'Mail placeholders: {APP_NAME}, {APP_URL}, {TOKEN}, {OTP}, {OTP_ID}, {RECORD:fieldName}.'), alert, save);
}

// deleteCollection deletes c once its name is typed; deleted() follows.
export function deleteCollection(c, deleted) {
  const name = field('confirmName', `Type ${String(c.name)} to confirm`, { id: 'del-coll-name', attrs: { autocomplete: 'off' } });
  const alert = h('div');
  const go = h('button', { type: 'submit', class: 'danger' }, 'Delete collection');
  return h('form', {
    class: 'coll-panel', 'aria-label': 'Delete collection', onsubmit: async (e) => {
      e.preventDefault();
      clearErrors([name]);
      if (name.input.value !== c.name) {
        name.error.textContent = 'Type the collection\'s name to confirm.';
        return;
      }
      try {
        await busy(go, () => api('DELETE', `/api/collections/${encodeURIComponent(c.id)}`));
        deleted();
      } catch (e2) {
        alert.replaceChildren(message('alert', e2.message));
      }
    },
  }, h('h2', null, 'Delete collection'), name.row, alert, go);
}

// createCollection creates an auth collection by name; created(c) follows.
export function createCollection(created) {
  const name = field('name', 'New auth collection name', { id: 'new-coll-name', attrs: { autocomplete: 'off' } });
  const alert = h('div');
  const go = h('button', { type: 'submit' }, 'Create collection');
  return h('form', {
    class: 'coll-panel', 'aria-label': 'New auth collection', onsubmit: async (e) => {
      e.preventDefault();
      clearErrors([name]);
      alert.replaceChildren();
      try {
        const c = await busy(go, () => api('POST', '/api/collections', { name: name.input.value.trim(), type: 'auth' }));
        created(c);
      } catch (e2) {
        alert.replaceChildren(showErrors(e2, [name], quiet));
      }
    },
  }, name.row, alert, go);
}
