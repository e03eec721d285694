// The Options tab of an auth collection's settings, in sections each
// saved on its own with PATCH /api/collections/{id} (only its keys):
// password auth and its identity fields, OTP, passkeys, MFA and its rule, TOTP, OAuth2
// (colloauth.js), the new-login alert, the token durations and the mail
// templates. Labels are words ("Auth token duration"), the API's name
// in a hint (authToken.duration). Also: creating, renaming and deleting
// a collection. Every value is set as text or an attribute value.

import { api } from './api.js';
import { busy, h, message, notice } from './dom.js';
import { clearErrors, field, quiet, showErrors } from './forms.js';
import { oauth2Form } from './colloauth.js';

const tokens = [['authToken', 'Auth token'], ['passwordResetToken', 'Password reset token'], ['emailChangeToken', 'Email change token'],
  ['verificationToken', 'Verification token'], ['fileToken', 'File token']];
const templates = [['verificationTemplate', 'Verification mail'], ['resetPasswordTemplate', 'Password reset mail'],
  ['confirmEmailChangeTemplate', 'Email change mail'], ['otp.emailTemplate', 'OTP mail'], ['authAlert.emailTemplate', 'New login alert mail']];

// sections are the Options tab's forms: [title, hint, fields], a field
// [path in the collection, label, kind].
const sections = [
  ['Password', 'Sign in with an identity (one of the identity fields) and a password.', [
    ['passwordAuth.enabled', 'Password sign-in enabled', 'bool'],
    ['passwordAuth.identityFields', 'Identity fields (comma separated)', 'list']]],
  ['One-time password (OTP)', 'Sign in with a code sent by mail.', [
    ['otp.enabled', 'OTP enabled', 'bool'], ['otp.duration', 'Code duration (seconds)', 'number'], ['otp.length', 'Code length', 'number']]],
  ['Passkeys', 'Sign in with a passkey (WebAuthn); the relying party is the host of the app URL (Settings).', [
    ['passkey.enabled', 'Passkeys enabled', 'bool']]],
  ['Multi-factor authentication (MFA)', 'Ask for a second method after a first sign-in.', [
    ['mfa.enabled', 'MFA enabled', 'bool'], ['mfa.duration', 'Time to give the second factor (seconds)', 'number'],
    ['mfa.rule', 'Applies to (a rule; empty: every record)', 'text']]],
  ['Authenticator app (TOTP)', 'Records may set up an authenticator app; each one that has is asked for its code after every sign-in, MFA or not.', [
    ['totp.enabled', 'TOTP enabled', 'bool']]],
  ['New login alert', 'Mail a record when it signs in from a new place.', [['authAlert.enabled', 'New login alert enabled', 'bool']]],
  ['Token durations', 'How long each kind of token lasts.', tokens.map(([t, l]) => [`${t}.duration`, `${l} duration (seconds)`, 'number'])],
  ['Mail templates', 'Placeholders: {APP_NAME}, {APP_URL}, {TOKEN}, {OTP}, {OTP_ID}, {RECORD:fieldName}.',
    templates.flatMap(([p, l]) => [[`${p}.subject`, `${l}: subject`, 'text'], [`${p}.body`, `${l}: body (HTML)`, 'textarea']])],
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

// withHint adds the API's name of a field (path) after its label.
function withHint(f, path) {
  f.row.querySelector('label').after(h('span', { class: 'hint api-name' }, path));
  return f;
}

// optField is the field of one option (see field), whose error is the
// envelope's at its path (the data of a nested option is nested, as
// PocketBase answers).
function optField(c, [path, label, kind]) {
  const id = idOf(path);
  const v = get(c, path);
  const str = v === null || v === undefined ? '' : String(v);
  let f;
  if (kind === 'bool') f = field(path, label, { id, type: 'checkbox', attrs: { checked: !!v } });
  else if (kind === 'textarea') f = field(path, label, { id, type: 'textarea', value: str, attrs: { rows: 6 } });
  else {
    const value = kind === 'list' ? (Array.isArray(v) ? v.join(', ') : '') : str;
    f = field(path, label, { id, type: kind === 'number' ? 'number' : 'text', attrs: { value } });
  }
  return { kind, ...withHint(f, path) };
}

function optValue(f) {
  if (f.kind === 'bool') return f.input.checked;
  if (f.kind === 'number') return Number(f.input.value);
  if (f.kind === 'list') return f.input.value.split(',').map((s) => s.trim()).filter(Boolean);
  return f.input.value;
}

// optionsSection is one section's form; saved(c) follows a save.
function optionsSection(c, [title, hint, spec], saved) {
  const fields = spec.map((s) => optField(c, s));
  const save = h('button', { type: 'submit' }, `Save ${title.replace(/ \(.*\)$/, '').toLowerCase()}`);
  const form = h('form', { class: 'coll-panel opt-section', 'aria-label': title });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = {};
    for (const f of fields) set(body, f.key, optValue(f));
    try {
      const res = await busy(save, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, body));
      clearErrors(fields);
      note.show(message('status', `${title}: saved.`));
      saved(res);
    } catch (err) {
      note.show(showErrors(err, fields));
    }
  });
  form.append(h('h3', null, title), h('p', { class: 'hint' }, hint), ...fields.map((f) => f.row), note.slot, save);
  return form;
}

// optionsTab is the Options tab of the auth collection c; saved(c)
// follows each save with the collection the server answers.
export function optionsTab(c, saved) {
  const forms = sections.map((s) => optionsSection(c, s, saved));
  const mail = h('details', { class: 'opt-mail' }, h('summary', null, 'Mail templates'), forms.pop());
  return h('div', { class: 'opts' }, forms.slice(0, 4), oauth2Form(c), forms.slice(4), mail);
}

// renameForm renames c; saved(c) follows with the collection answered.
export function renameForm(c, saved) {
  const name = withHint(field('name', 'Name', { id: 'opt-name', attrs: { value: String(c.name), autocomplete: 'off', spellcheck: 'false' } }), 'name');
  const go = h('button', { type: 'submit' }, 'Rename');
  const form = h('form', { class: 'rename', 'aria-label': 'Rename collection' });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors([name]);
    try {
      const res = await busy(go, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, { name: name.input.value.trim() }));
      note.show(message('status', `Renamed to ${res.name}.`));
      saved(res);
    } catch (err) {
      note.show(showErrors(err, [name], quiet));
    }
  });
  form.append(h('div', { class: 'row' }, name.row, go), note.slot);
  return form;
}

// deleteCollection deletes c once its name is typed; deleted() follows.
export function deleteCollection(c, deleted) {
  const name = field('confirmName', `Type ${String(c.name)} to confirm`, { id: 'del-coll-name', attrs: { autocomplete: 'off' } });
  const go = h('button', { type: 'submit', class: 'danger' }, 'Delete collection');
  const form = h('form', { class: 'coll-panel danger-zone', 'aria-label': 'Delete collection' });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors([name]);
    if (name.input.value !== c.name) {
      name.error.textContent = 'Type the collection\'s name to confirm.';
      return;
    }
    try {
      await busy(go, () => api('DELETE', `/api/collections/${encodeURIComponent(c.id)}`));
      deleted();
    } catch (err) {
      note.show(message('alert', err.message));
    }
  });
  form.append(h('h3', null, 'Delete collection'), h('p', { class: 'hint' }, 'Deletes the collection and all its records.'), name.row, note.slot, go);
  return form;
}

// createCollection creates an auth collection by name; created(c)
// follows, and the form says so and clears the name.
export function createCollection(created) {
  const name = field('name', 'New auth collection', { id: 'new-coll-name', attrs: { autocomplete: 'off', spellcheck: 'false', placeholder: 'name' } });
  const go = h('button', { type: 'submit' }, 'Create');
  const form = h('form', { class: 'coll-new', 'aria-label': 'New auth collection' });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors([name]);
    try {
      const c = await busy(go, () => api('POST', '/api/collections', { name: name.input.value.trim(), type: 'auth' }));
      name.input.value = '';
      note.show(message('status', `The collection ${c.name} was created.`));
      created(c);
    } catch (err) {
      note.show(showErrors(err, [name], quiet));
    }
  });
  form.append(h('div', { class: 'row' }, name.row, go), note.slot);
  return form;
}
