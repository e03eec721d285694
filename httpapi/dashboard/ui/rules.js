// The API rules tab of a collection's settings: each rule shows its state
// plainly (locked: superusers only, a null rule; public: "", anyone; or a
// filter), one button locks or unlocks it, and the text typed is never
// dropped or saved as the opposite: unlocking brings it back, locking a
// rule with text asks first (within the page). "Show available fields"
// lists what a rule may name, typing offers completions, and a rule the
// server refuses shows the server's message beside it. The functions
// before rulesTab are pure (no DOM): Node's test runner imports them.

import { api } from './api.js';
import { busy, h, message, notice } from './dom.js';
import { clearErrors, field, quiet, showErrors } from './forms.js';

// ruleDefs are the rules of a collection: [key, label, what it guards];
// authOnly ones exist on auth collections only.
export const ruleDefs = [
  ['listRule', 'List/Search rule', 'who may list and search records'],
  ['viewRule', 'View rule', 'who may view one record'],
  ['createRule', 'Create rule', 'who may create a record (sign up)'],
  ['updateRule', 'Update rule', 'who may update a record'],
  ['deleteRule', 'Delete rule', 'who may delete a record'],
  ['authRule', 'Authentication rule', 'which records may sign in, checked after their credentials', true],
  ['manageRule', 'Manage rule', 'who may change another record\'s email, password and verified state, as a superuser would', true],
];

// ruleState is the state of a rule's value as the API reports it:
// "locked" (null: superusers only), "public" ("": anyone, guests too) or
// "filter" (only the requests the filter accepts).
export function ruleState(value) {
  if (value === null || value === undefined) return 'locked';
  return String(value).trim() === '' ? 'public' : 'filter';
}

// formState is the state the form's values stand for: the rule locked
// or not, and its text.
export function formState(locked, text) {
  return locked ? 'locked' : ruleState(text);
}

// ruleValue is what the form saves: null when locked (whatever text is
// kept for unlocking again), else the text trimmed.
export function ruleValue(locked, text) {
  return locked ? null : String(text).trim();
}

// applyToggle is the lock button pressed on a rule that is locked or not,
// with text typed: it returns {locked, text, ask}. Unlocking keeps the
// text; locking an empty rule is immediate; locking a rule with text asks
// first (ask true, nothing changed) unless confirmed, and then keeps the
// text aside, unsaved, for an unlock before saving.
export function applyToggle(locked, text, confirmed = false) {
  if (locked) return { locked: false, text, ask: false };
  if (String(text).trim() === '' || confirmed) return { locked: true, text, ask: false };
  return { locked: false, text, ask: true };
}

// stateText describes a state for the rule key.
export function stateText(state, key) {
  if (state === 'locked') return 'Locked: superusers only.';
  if (state === 'public') {
    return key === 'manageRule' ? 'Empty: the manage rule cannot be public; lock it or write a filter.'
      : 'Public: anyone, guests too.';
  }
  return 'Filter: only the requests it accepts.';
}

const authBase = ['id', 'collectionId', 'collectionName', 'email', 'emailVisibility', 'verified', 'created', 'updated'];

// availableFields lists the names a rule of the collection c may use, in
// groups [title, names]: the collection's own fields, @request.auth.* (the
// fields of any auth collection of all), @request.body.*, the other
// @request values, and @collection.* (which this server refuses: it joins
// no collection).
export function availableFields(c, all = []) {
  const fields = (c.fields || []).filter((f) => f && f.name && !(f.hidden && f.system));
  const own = fields.map((f) => f.name);
  const settable = fields.filter((f) => f.name !== 'id' && f.type !== 'autodate').map((f) => f.name);
  const auth = new Set(authBase);
  for (const x of all) {
    if (x && x.type === 'auth') for (const f of x.fields || []) if (f && f.name && !f.hidden) auth.add(f.name);
  }
  return [
    ['Fields of ' + c.name, own],
    ['The signed-in record', [...auth].map((n) => `@request.auth.${n}`)],
    ['The submitted body', settable.map((n) => `@request.body.${n}`)],
    ['The request', ['@request.method', '@request.context', '@request.query.', '@request.headers.']],
    ['Other collections (refused: this server joins none)', all.filter((x) => x && x.name).map((x) => `@collection.${x.name}.`)],
  ];
}

// tokenAt returns the identifier being typed in text before the caret:
// {start, word}, word "" when the caret follows no identifier character.
export function tokenAt(text, caret) {
  let start = caret;
  while (start > 0 && /[@\w.:]/.test(text[start - 1])) start--;
  return { start, word: text.slice(start, caret) };
}

// completions returns the names (at most max) that start with word,
// case-insensitively, other than word itself; none for an empty word.
export function completions(word, names, max = 8) {
  if (!word) return [];
  const w = word.toLowerCase();
  return names.filter((n) => n.toLowerCase().startsWith(w) && n !== word).slice(0, max);
}

// insertCompletion puts name in place of the word before caret in text:
// it returns {text, caret}, the caret after the name.
export function insertCompletion(text, caret, name) {
  const { start } = tokenAt(text, caret);
  return { text: text.slice(0, start) + name + text.slice(caret), caret: start + name.length };
}

let seq = 0;

// completer adds completions to the textarea ta: a small listbox under it
// that follows what is typed (ArrowDown and ArrowUp pick, Enter or Tab
// takes, Escape closes it), from the names names() returns.
function completer(ta, names) {
  const id = `rule-complete-${++seq}`;
  const list = h('ul', { id, role: 'listbox', class: 'rule-complete', hidden: true, 'aria-label': 'Completions' });
  let items = [];
  let active = -1;
  ta.setAttribute('aria-autocomplete', 'list');
  ta.setAttribute('aria-controls', id);
  const close = () => {
    items = [];
    active = -1;
    list.hidden = true;
    ta.removeAttribute('aria-activedescendant');
  };
  const take = (name) => {
    const r = insertCompletion(ta.value, ta.selectionStart, name);
    ta.value = r.text;
    ta.setSelectionRange(r.caret, r.caret);
    close();
    ta.dispatchEvent(new Event('input', { bubbles: true }));
  };
  const mark = () => {
    [...list.children].forEach((li, i) => li.setAttribute('aria-selected', i === active ? 'true' : 'false'));
    if (active >= 0) ta.setAttribute('aria-activedescendant', `${id}-${active}`);
  };
  const update = () => {
    items = completions(tokenAt(ta.value, ta.selectionStart).word, names());
    active = -1;
    list.replaceChildren(...items.map((n, i) => h('li', {
      id: `${id}-${i}`, role: 'option', 'aria-selected': 'false',
      onmousedown: (e) => { e.preventDefault(); take(n); },
    }, n)));
    list.hidden = items.length === 0;
  };
  ta.addEventListener('input', (e) => { if (e.isTrusted) update(); });
  ta.addEventListener('blur', close);
  ta.addEventListener('keydown', (e) => {
    if (list.hidden) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      active = (active + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
      mark();
    } else if ((e.key === 'Enter' || e.key === 'Tab') && items.length) {
      e.preventDefault();
      take(items[Math.max(active, 0)]);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      close();
    }
  });
  return list;
}

// ruleRow is one rule of c: its state, the lock button, the text box
// (with completions from names()), the in-page question before locking
// a rule with text, and the field for the server's message.
function ruleRow(c, [key, label, what], names) {
  const initial = c[key];
  const st = { locked: ruleState(initial) === 'locked', text: initial === null || initial === undefined ? '' : String(initial) };
  const f = field(key, label, { id: `rule-${key}`, type: 'textarea', value: st.text, attrs: { rows: 2, spellcheck: 'false' } });
  const state = h('p', { class: 'rule-state', id: `rule-${key}-state` });
  const toggle = h('button', { type: 'button', class: 'plain', id: `rule-${key}-toggle` });
  const ask = h('div', { class: 'rule-ask', hidden: true, role: 'group', 'aria-label': `Lock ${label}?` });
  const draw = () => {
    const s = formState(st.locked, f.input.value);
    state.textContent = stateText(s, key);
    state.dataset.state = s;
    toggle.textContent = st.locked ? 'Unlock (set a rule)' : 'Lock (superusers only)';
    f.input.disabled = st.locked;
    f.input.hidden = st.locked;
  };
  const press = (confirmed) => {
    const r = applyToggle(st.locked, f.input.value, confirmed);
    ask.hidden = !r.ask;
    if (r.ask) {
      ask.querySelector('button').focus();
      return;
    }
    st.locked = r.locked;
    draw();
    (st.locked ? toggle : f.input).focus();
    f.input.dispatchEvent(new Event('change', { bubbles: true }));
  };
  toggle.addEventListener('click', () => press(false));
  ask.append(h('p', null, 'Locking makes this rule superusers only: its filter will not be saved (unlock before saving to keep it).'),
    h('div', { class: 'coll-actions' },
      h('button', { type: 'button', class: 'danger', onclick: () => press(true) }, 'Lock it'),
      h('button', { type: 'button', class: 'plain', onclick: () => { ask.hidden = true; f.input.focus(); } }, 'Keep the filter')));
  f.input.addEventListener('input', draw);
  f.input.setAttribute('aria-describedby', `rule-${key}-state err-rule-${key}`);
  f.row.querySelector('label').after(h('span', { class: 'hint api-name' }, `${key}: ${what}`), state);
  f.input.after(completer(f.input, names), toggle, ask);
  draw();
  return { ...f, value: () => ruleValue(st.locked, f.input.value) };
}

// rulesTab edits the API rules of c (the collections all, for the
// fields @request.auth may name); saved(c) follows a save with the
// collection the server answers.
export function rulesTab(c, all, saved) {
  const groups = availableFields(c, all);
  const names = () => groups.flatMap(([, n]) => n);
  const defs = ruleDefs.filter((d) => !d[3] || c.type === 'auth');
  const rows = defs.map((d) => ruleRow(c, d, names));
  const list = h('div', { class: 'rule-fields', hidden: true },
    groups.map(([title, n]) => h('div', null, h('h4', null, title), h('ul', null, n.map((x) => h('li', null, h('code', null, x)))))));
  const show = h('button', {
    type: 'button', class: 'plain', 'aria-expanded': 'false', onclick: () => {
      list.hidden = !list.hidden;
      show.setAttribute('aria-expanded', String(!list.hidden));
      show.textContent = list.hidden ? 'Show available fields' : 'Hide available fields';
    },
  }, 'Show available fields');
  const save = h('button', { type: 'submit' }, 'Save rules');
  const form = h('form', { class: 'rules', 'aria-label': 'API rules' });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = Object.fromEntries(rows.map((r) => [r.key, r.value()]));
    try {
      const res = await busy(save, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, body));
      clearErrors(rows);
      note.show(message('status', 'The API rules were saved.'));
      saved(res);
    } catch (err) {
      note.show(showErrors(err, rows, quiet));
    }
  });
  form.append(h('p', { class: 'hint' }, 'A rule is a filter of the request (the filter language); locked, only superusers pass; empty, anyone does.'),
    show, list, ...rows.map((r) => r.row), note.slot, save);
  return form;
}
