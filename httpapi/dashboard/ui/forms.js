// Forms: the labelled field every screen builds, and the error envelope's
// field errors (APIError.data) shown next to their fields. A field's error
// element (class field-error) is named by its control's aria-describedby.
// fieldErrors and placeErrors are pure (no DOM): Node's test runner
// imports them.

import { APIError } from './api.js';
import { h, message } from './dom.js';

// field builds a labelled control named name and the element that shows
// its error, in a div.field (div.field.check for a checkbox, which comes
// before its label). The control's id is f-<name> and its error's
// err-<name>, or opts.id and err-<opts.id>. The other options:
//   - key: the dotted path of the envelope's data (data.smtp.host is
//     smtp.host) whose error the field shows; name if not given.
//   - type: an input's type (text if not given), or select (its options
//     are opts.options, [value, text] pairs), or textarea (opts.value is
//     its text).
//   - attrs: more attributes of the control (see h).
//   - after: nodes between the control and its error.
// It returns {key, input, error, row}: input is the control, row the div.
export function field(name, label, opts = {}) {
  const { type = 'text', key = name } = opts;
  const id = opts.id || `f-${name}`;
  const errorId = `err-${opts.id || name}`;
  const attrs = { id, name, 'aria-describedby': errorId, ...opts.attrs };
  let input;
  if (type === 'select') input = h('select', attrs, (opts.options || []).map(([v, t]) => h('option', { value: v }, t)));
  else if (type === 'textarea') input = h('textarea', attrs, opts.value ?? '');
  else input = h('input', { ...attrs, type });
  const error = h('p', { id: errorId, class: 'field-error' });
  const text = h('label', { for: id }, label);
  const row = type === 'checkbox'
    ? h('div', { class: 'field check' }, input, text, error)
    : h('div', { class: 'field' }, text, input, opts.after, error);
  return { key, input, error, row };
}

// fieldErrors returns the field errors of err's data, as PocketBase's
// envelope nests them (like the body: data.smtp.host, data.rules.0.label):
// a [key, message] pair for each object with a non-empty string message,
// key its dotted path, in the data's order. Anything but an APIError has
// none.
export function fieldErrors(err) {
  const out = [];
  const walk = (data, prefix) => {
    for (const [k, v] of Object.entries(data)) {
      if (!v || typeof v !== 'object') continue;
      if (typeof v.message !== 'string') walk(v, `${prefix}${k}.`);
      else if (v.message) out.push([prefix + k, v.message]);
    }
  };
  if (err instanceof APIError) walk(err.data, '');
  return out;
}

// placeErrors decides where the messages of err go when a form shows the
// fields of keys: it returns {fields, alert}, fields a Map of each such
// key with an error to its message, alert the text of the alert: err's
// message, followed by the messages no field shows (each after its key
// when that is a path, "smtp.port: …", as the field alone would not say
// which section it is of), unless opts.rest is false.
export function placeErrors(err, keys, opts = {}) {
  if (!(err instanceof APIError)) return { fields: new Map(), alert: String(err && err.message ? err.message : err) };
  const shown = new Set(keys);
  const fields = new Map();
  const rest = [];
  for (const [key, msg] of fieldErrors(err)) {
    if (shown.has(key)) fields.set(key, msg);
    else if (opts.rest !== false) rest.push(key.includes('.') ? `${key}: ${msg}` : msg);
  }
  return { fields, alert: [err.message, ...rest].join(' ') };
}

// clearErrors empties the error elements of fields (built by field) and
// takes back their aria-invalid.
export function clearErrors(fields) {
  for (const f of fields) {
    f.error.textContent = '';
    f.input.removeAttribute('aria-invalid');
  }
}

// quiet are the options of showErrors for the Collections screen's forms,
// which show their fields' messages only: they mark no input and leave
// other fields' messages out of the alert.
export const quiet = Object.freeze({ mark: false, rest: false });

// showErrors shows err in fields (built by field): each field's message
// in its error element, the others emptied; and returns the alert (see
// placeErrors; opts.rest is passed on). Unless opts.mark is false, the
// inputs with an error are also marked aria-invalid and the first gets
// the focus.
export function showErrors(err, fields, opts = {}) {
  clearErrors(fields);
  const placed = placeErrors(err, fields.map((f) => f.key), opts);
  let first = null;
  for (const f of fields) {
    const msg = placed.fields.get(f.key);
    if (!msg) continue;
    f.error.textContent = msg;
    if (opts.mark !== false) {
      f.input.setAttribute('aria-invalid', 'true');
      first = first || f.input;
    }
  }
  if (first) first.focus();
  return message('alert', placed.alert);
}
