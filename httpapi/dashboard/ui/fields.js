// The Fields tab of a collection's settings: the built-in fields of an
// auth collection shown as they are (the server keeps them unchanged),
// and its own fields added, renamed, reordered and removed, with their
// options, saved as the whole list with PATCH /api/collections/{id}
// `fields`, as PocketBase's dashboard does. Only the types strongbox
// stores are offered. A field's error (data.fields.N.key) shows on its
// row. The functions before fieldsTab are pure (no DOM): Node's test
// runner imports them.

import { api } from './api.js';
import { busy, h, message, notice } from './dom.js';
import { fieldErrors } from './forms.js';

// fieldTypes are the types a collection's own field may have here:
// [type, label].
export const fieldTypes = [['text', 'Plain text'], ['number', 'Number'], ['bool', 'Bool'], ['email', 'Email'], ['url', 'URL']];

// isBuiltin tells the fields the server defines for every auth
// collection (system ones, and the created and updated dates), which it
// takes back only unchanged.
export function isBuiltin(f) {
  return !!f && (f.system === true || (f.type === 'autodate' && (f.name === 'created' || f.name === 'updated')));
}

// newField is a field of type with a name no field of list has
// ("field", "field2", …) and its type's options at their defaults.
export function newField(type, list) {
  const taken = new Set(list.map((f) => f.name));
  let name = 'field';
  for (let i = 2; taken.has(name); i++) name = `field${i}`;
  return shape({ name, type, required: false, hidden: false, presentable: false });
}

// shape returns f with the options of its type only (min and max of a
// number null when not set, as the API reports them; of a text 0).
export function shape(f) {
  const out = { name: String(f.name ?? ''), type: f.type, required: !!f.required, hidden: !!f.hidden, presentable: !!f.presentable };
  if (f.id) out.id = f.id;
  const num = (v) => (v === '' || v === null || v === undefined || Number.isNaN(Number(v)) ? null : Number(v));
  if (f.type === 'text') {
    out.min = num(f.min) ?? 0;
    out.max = num(f.max) ?? 0;
    out.pattern = String(f.pattern ?? '');
    if (f.autogeneratePattern) out.autogeneratePattern = String(f.autogeneratePattern);
  } else if (f.type === 'number') {
    out.min = num(f.min) || null;
    out.max = num(f.max) || null;
    out.onlyInt = !!f.onlyInt;
  }
  return out;
}

// moveField returns list with the field at i moved by delta places
// (-1 up, 1 down); list itself when it cannot move.
export function moveField(list, i, delta) {
  const j = i + delta;
  if (i < 0 || i >= list.length || j < 0 || j >= list.length) return list;
  const out = list.slice();
  [out[i], out[j]] = [out[j], out[i]];
  return out;
}

// removeField returns list without the field at i, unless it is a
// built-in field (list itself).
export function removeField(list, i) {
  if (!list[i] || isBuiltin(list[i])) return list;
  return list.filter((_, k) => k !== i);
}

// editable tells the fields this tab edits: not the built-in ones, nor
// one of a type it does not offer (a file field PocketBase's users
// collection has), which are sent back as they are.
export function editable(f) {
  return !isBuiltin(f) && fieldTypes.some(([t]) => t === f.type);
}

// payload is the fields value to send for list: the fields not editable
// here exactly as the server gave them, the others shaped (see shape).
export function payload(list) {
  return list.map((f) => (editable(f) ? shape(f) : f));
}

// rowErrors returns the field errors of err for the list sent in that
// order: a Map from each index to a Map from the option's key (name,
// type, min…) to its message, and rest, the messages of no row.
export function rowErrors(err) {
  const rows = new Map();
  const rest = [];
  for (const [key, msg] of fieldErrors(err)) {
    const m = /^fields\.(\d+)(?:\.(.+))?$/.exec(key);
    if (!m) {
      rest.push(key === 'fields' ? msg : `${key}: ${msg}`);
      continue;
    }
    const i = Number(m[1]);
    if (!rows.has(i)) rows.set(i, new Map());
    rows.get(i).set(m[2] || '', msg);
  }
  return { rows, rest };
}

const optLabels = { required: 'Required', hidden: 'Hidden (superusers only)', presentable: 'Presentable', onlyInt: 'Integers only' };

// fieldEditor is the row of the field f (index i of the list): inputs
// that write back into f, and the move and remove buttons.
function fieldEditor(f, i, n, act) {
  const id = `fld-${i}`;
  const typeLabel = (fieldTypes.find(([t]) => t === f.type) || [f.type, f.type])[1];
  const err = h('p', { class: 'field-error', id: `err-${id}` });
  const btn = (label, text, on, disabled) => h('button', { type: 'button', class: 'plain small', 'aria-label': `${label} ${f.name}`, disabled, onclick: on }, text);
  const moves = [btn('Move up', 'Up', () => act('move', i, -1), i === 0), btn('Move down', 'Down', () => act('move', i, 1), i === n - 1)];
  if (isBuiltin(f)) {
    return h('li', { class: 'fld fld-builtin', id, 'data-name': f.name },
      h('span', { class: 'fld-name' }, f.name), h('span', { class: 'fld-type' }, typeLabel),
      h('span', { class: 'hint' }, f.system ? 'system field' : 'built-in date'), err);
  }
  if (!editable(f)) {
    return h('li', { class: 'fld fld-kept', id, 'data-name': f.name },
      h('span', { class: 'fld-name' }, f.name), h('span', { class: 'fld-type' }, typeLabel),
      h('span', { class: 'hint' }, 'kept as it is: this server stores no value of this type'),
      h('div', { class: 'coll-actions' }, moves, btn('Remove', 'Remove', () => act('remove', i))), err);
  }
  const input = (key, label, attrs) => {
    const el = h('input', { id: `${id}-${key}`, 'aria-describedby': `err-${id}`, ...attrs });
    el.addEventListener('input', () => { f[key] = el.type === 'checkbox' ? el.checked : el.value; });
    el.addEventListener('change', () => { f[key] = el.type === 'checkbox' ? el.checked : el.value; });
    return h('div', { class: el.type === 'checkbox' ? 'field check' : 'field' },
      el.type === 'checkbox' ? [el, h('label', { for: el.id }, label)] : [h('label', { for: el.id }, label), el]);
  };
  const check = (key) => input(key, optLabels[key], { type: 'checkbox', checked: !!f[key] });
  const num = (key, label) => input(key, label, { type: 'number', value: f[key] === null || f[key] === undefined || f[key] === 0 ? '' : String(f[key]) });
  const checks = [check('required'), check('hidden'), check('presentable')];
  const opts = [];
  if (f.type === 'text') opts.push(num('min', 'Min length'), num('max', 'Max length'), input('pattern', 'Pattern (regular expression)', { type: 'text', value: f.pattern || '' }));
  if (f.type === 'number') {
    checks.push(check('onlyInt'));
    opts.push(num('min', 'Min'), num('max', 'Max'));
  }
  return h('li', { class: 'fld', id, 'data-name': f.name },
    h('div', { class: 'fld-head' }, input('name', `Name (${typeLabel})`, { type: 'text', value: f.name, autocomplete: 'off', spellcheck: 'false' }),
      h('div', { class: 'coll-actions' }, moves, btn('Remove', 'Remove', () => act('remove', i)))),
    h('div', { class: 'fld-checks' }, checks), opts.length ? h('div', { class: 'fld-opts' }, opts) : null, err);
}

// fieldsTab edits the fields of c; saved(c) follows a save with the
// collection the server answers.
export function fieldsTab(c, saved) {
  let list = (c.fields || []).map((f) => (editable(f) ? { ...f } : f));
  const ul = h('ul', { class: 'flds', 'aria-label': 'Fields' });
  const save = h('button', { type: 'submit' }, 'Save fields');
  const type = h('select', { id: 'fld-new-type', 'aria-label': 'Type of the new field' }, fieldTypes.map(([t, l]) => h('option', { value: t }, l)));
  const form = h('form', { class: 'flds-form', 'aria-label': 'Fields' });
  const note = notice(form);
  const draw = (focusId) => {
    ul.replaceChildren(...list.map((f, i) => fieldEditor(f, i, list.length, act)));
    if (focusId) document.getElementById(focusId)?.focus();
  };
  const act = (what, i, delta) => {
    note.clear();
    if (what === 'move') list = moveField(list, i, delta);
    if (what === 'remove') list = removeField(list, i);
    draw(what === 'move' ? `fld-${i + delta}-name` : 'fld-new-type');
  };
  const add = h('button', {
    type: 'button', class: 'plain', onclick: () => {
      note.clear();
      list = [...list, newField(type.value, list)];
      draw(`fld-${list.length - 1}-name`);
      document.getElementById(`fld-${list.length - 1}-name`)?.select();
    },
  }, 'Add field');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    for (const p of ul.querySelectorAll('.field-error')) p.textContent = '';
    try {
      const res = await busy(save, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, { fields: payload(list) }));
      list = (res.fields || []).map((f) => (editable(f) ? { ...f } : f));
      draw();
      note.show(message('status', 'The fields were saved.'));
      saved(res);
    } catch (err) {
      const { rows, rest } = rowErrors(err);
      for (const [i, m] of rows) {
        const p = document.getElementById(`err-fld-${i}`);
        const text = [...m].map(([k, v]) => (k ? `${k}: ${v}` : v)).join(' ');
        if (p) p.textContent = text;
        else rest.push(`${list[i] ? list[i].name : i}: ${text}`);
      }
      note.show(message('alert', [err.message, ...rest].join(' ')));
    }
  });
  draw();
  form.append(h('p', { class: 'hint' }, 'The system fields and the created and updated dates are kept by the server as they are. Types: text, number, bool, email and URL (the ones this server stores).'),
    ul, h('div', { class: 'coll-actions fld-add' }, h('label', { for: 'fld-new-type' }, 'New field of type'), type, add), note.slot, save);
  return form;
}
