// OAuth2 on the Collections screen: the collection's switch, its
// providers and mapped fields, saved with PATCH /api/collections/{id};
// and a record's linked OAuth2 accounts (its _externalAuths rows), each
// unlinked by deleting its row. A provider is added from a picker of the
// server's presets (providers.js), searchable by display name or name,
// and has only its own fields: client id, a write-only secret (left empty
// it keeps the stored one, as the server does), the URLs for the presets
// without endpoints of their own, a display name and PKCE. The redirect
// URL to register at the provider is shown with a copy button. The
// server's field errors show beside their fields and, each naming its
// provider, in the banner. Every value is set as text or an attribute
// value.

import { api, collectionPath } from './api.js';
import { busy, h, message, notice, stylesheet } from './dom.js';
import { clearErrors, field, fieldErrors, showErrors } from './forms.js';
import { errorLines, fieldsFor, filterProviders, glyph, label, pkceChoices, presetFor, providerPayload, redirectURL, valueOf } from './providers.js';

const mapped = ['id', 'name', 'username', 'avatarURL'];

// providerRow is the fieldset of the provider p as stored (stored false:
// being added), its controls' ids oa-<seq>-<key>.
function providerRow(p, seq, stored, remove) {
  const n = `oa-${seq}`;
  const pre = presetFor(p.name);
  const nameError = h('p', { id: `err-${n}-name`, class: 'field-error' });
  const fields = fieldsFor(p.name, stored ? p : null).map((d) => {
    const id = `${n}-${d.key.replace(/^extra\./, '')}`;
    const text = d.label + (d.required ? ' (required)' : '');
    const hint = d.hint ? h('p', { class: 'oa-hint', id: `${id}-hint` }, d.hint) : null;
    let f;
    if (d.kind === 'pkce') {
      f = field(d.key, text, { id, type: 'select', options: pkceChoices(pre.pkce).map(([v, t]) => [v, t]) });
      f.input.value = valueOf(p, 'pkce');
    } else {
      const attrs = { value: valueOf(p, d.key), spellcheck: 'false', autocapitalize: 'off' };
      if (d.kind === 'secret') Object.assign(attrs, { autocomplete: 'new-password', placeholder: stored ? '(stored)' : '' });
      if (d.kind === 'url') attrs.inputmode = 'url';
      if (d.key === 'displayName') attrs.placeholder = pre.displayName;
      f = field(d.key, text, { id, type: d.kind === 'secret' ? 'password' : 'text', attrs, after: hint });
    }
    if (hint) f.input.setAttribute('aria-describedby', `${id}-hint ${f.error.id}`);
    f.row.classList.add(`oa-kind-${d.kind}`);
    return { ...f, d, hint };
  });
  const node = h('fieldset', { class: 'oa-provider', tabindex: '-1', 'aria-describedby': nameError.id },
    h('legend', null, h('span', { class: 'oa-glyph', 'aria-hidden': 'true' }, glyph(p.name)), label(p.name)),
    nameError, h('div', { class: 'oa-fields' }, fields.map((f) => f.row)),
    h('button', { type: 'button', class: 'plain', onclick: () => remove(row) }, `Remove ${label(p.name)}`));
  const row = {
    p, node, fields,
    // The name's error shows at the top of the fieldset.
    nameField: { key: 'name', input: node, error: nameError },
    values: () => Object.fromEntries(fields.map((f) => [f.d.key, f.input.value])),
    // saved takes q (the provider as the server now has it) as stored:
    // the secret's box is emptied and says that one is kept.
    saved: (q) => {
      row.p = q;
      for (const f of fields) {
        if (f.d.kind !== 'secret') continue;
        f.input.value = '';
        f.input.placeholder = '(stored)';
        f.row.querySelector('label').textContent = f.d.label;
        if (f.hint) f.hint.textContent = fieldsFor(q.name, q).find((d) => d.key === 'clientSecret').hint;
      }
    },
  };
  return row;
}

// redirectBox shows the URL to register at the providers, with a copy
// button (its "Copied." a notice of form): under the application URL of
// the settings when one is set, else under this server's address.
function redirectBox(form) {
  const server = new URL('../', document.baseURI).href;
  const url = h('code', { id: 'oa-redirect', class: 'oa-url' }, redirectURL('', server));
  const source = h('p', { class: 'oa-hint' }, 'Under this server\'s address: no application URL is set in Settings.');
  const said = notice(form);
  api('GET', '/api/settings').then((s) => {
    const app = s && s.meta && typeof s.meta.appURL === 'string' ? s.meta.appURL.trim() : '';
    if (!app) return;
    url.textContent = redirectURL(app, server);
    source.textContent = 'Under the application URL set in Settings.';
  }).catch(() => {});
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url.textContent);
      said.show(message('status', 'Copied.'));
    } catch {
      // No clipboard (a page not served over HTTPS): the URL is selected.
      const range = document.createRange();
      range.selectNodeContents(url);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      said.show(message('status', 'Selected: copy it with Ctrl+C or ⌘C.'));
    }
  };
  return h('div', { class: 'oa-redirect', role: 'group', 'aria-labelledby': 'oa-redirect-label' },
    h('p', { id: 'oa-redirect-label', class: 'oa-label' }, 'Redirect URL to register at each provider'),
    h('div', { class: 'oa-copy' }, url, h('button', { type: 'button', class: 'plain', onclick: copy, 'aria-label': 'Copy the redirect URL' }, 'Copy')),
    source, said.slot);
}

// picker is the "Add provider" button and the panel it opens: a search
// box and the presets that match, each added by choose(preset); those in
// taken() are shown as added. Escape closes the panel, focus goes back.
function picker(choose, taken) {
  const search = h('input', { id: 'oa-new', type: 'search', autocomplete: 'off', spellcheck: 'false', 'aria-controls': 'oa-choices', 'aria-describedby': 'oa-count' });
  const list = h('ul', { id: 'oa-choices', class: 'oa-choices', 'aria-label': 'Providers' });
  const count = h('p', { id: 'oa-count', class: 'oa-hint', 'aria-live': 'polite' });
  const panel = h('div', { class: 'oa-picker', id: 'oa-picker', hidden: true, role: 'group', 'aria-label': 'Add a provider' },
    h('label', { for: search.id }, 'Search the providers'), search, count, list);
  const toggle = h('button', { type: 'button', class: 'plain', 'aria-expanded': 'false', 'aria-controls': panel.id }, 'Add provider');
  const close = (focus) => {
    panel.hidden = true;
    toggle.setAttribute('aria-expanded', 'false');
    if (focus) toggle.focus();
  };
  const render = () => {
    const found = filterProviders(search.value);
    const used = taken();
    list.replaceChildren(...found.map((p) => h('li', null, h('button', {
      type: 'button', class: 'plain oa-choice', disabled: used.has(p.name), 'data-name': p.name,
      onclick: () => { close(false); choose(p); },
    }, h('span', { class: 'oa-glyph', 'aria-hidden': 'true' }, glyph(p.name)),
    h('span', { class: 'oa-display' }, p.displayName), h('span', { class: 'oa-name' }, used.has(p.name) ? `${p.name} · added` : p.name)))));
    count.textContent = found.length ? `${found.length} of 32 providers.` : `No provider matches “${search.value.trim()}”.`;
  };
  search.addEventListener('input', render);
  panel.addEventListener('keydown', (e) => {
    const buttons = [...list.querySelectorAll('button:not(:disabled)')];
    const at = buttons.indexOf(document.activeElement);
    if (e.key === 'Escape') {
      e.preventDefault();
      close(true);
    } else if (e.key === 'Enter' && e.target === search) {
      // Enter in the search adds the first match, and never submits.
      e.preventDefault();
      if (buttons[0]) buttons[0].click();
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = e.key === 'ArrowDown' ? at + 1 : at - 1;
      if (next < 0) search.focus();
      else if (buttons[Math.min(next, buttons.length - 1)]) buttons[Math.min(next, buttons.length - 1)].focus();
    }
  });
  toggle.addEventListener('click', () => {
    if (!panel.hidden) return close(true);
    panel.hidden = false;
    toggle.setAttribute('aria-expanded', 'true');
    search.value = '';
    render();
    search.focus();
  });
  return h('div', { class: 'oa-add' }, toggle, panel);
}

// oauth2Form edits the OAuth2 options of the collection c.
export function oauth2Form(c) {
  stylesheet('colloauth.css');
  const o = c.oauth2 || {};
  const enabled = h('input', { id: 'oa-enabled', type: 'checkbox', checked: !!o.enabled });
  const maps = mapped.map((k) => ({ k, f: field(`mappedFields.${k}`, `Record field for the provider's ${k}`, { id: `oa-map-${k}`, attrs: { value: valueOf(o.mappedFields, k), spellcheck: 'false' } }) }));
  const list = h('div', { class: 'oa-list' });
  const empty = h('p', { class: 'oa-hint' }, 'No provider yet: add one below.');
  let rows = [];
  let seq = 0;
  const shown = () => { empty.hidden = rows.length > 0; };
  const remove = (row) => {
    rows = rows.filter((r) => r !== row);
    row.node.remove();
    shown();
    form.dispatchEvent(new Event('change'));
    add.querySelector('button').focus();
  };
  const append = (p, stored) => {
    const row = providerRow(p, seq++, stored, remove);
    rows.push(row);
    list.append(row.node);
    shown();
    return row;
  };
  (o.providers || []).forEach((p) => append(p, true));
  shown();
  const add = picker((p) => {
    const row = rows.find((r) => r.p.name === p.name) || append({ name: p.name }, false);
    row.fields[0].input.focus();
    form.dispatchEvent(new Event('change'));
  }, () => new Set(rows.map((r) => r.p.name)));
  const save = h('button', { type: 'submit' }, 'Save OAuth2');
  const form = h('form', { class: 'coll-panel oa', 'aria-label': 'OAuth2', novalidate: true });
  const note = notice(form);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const sent = rows.slice();
    const providers = sent.map((r) => providerPayload(r.values(), r.p));
    const body = { oauth2: { enabled: enabled.checked, providers, mappedFields: Object.fromEntries(maps.map(({ k, f }) => [k, f.input.value.trim()])) } };
    // The fields, each with the key of its error: a provider's by its
    // place in the list sent (data.oauth2.providers.0.clientId).
    const fields = [...sent.flatMap((r, i) => [r.nameField, ...r.fields].map((f) => ({ ...f, key: `oauth2.providers.${i}.${f.d ? f.d.key : f.key}` }))),
      ...maps.map(({ k, f }) => ({ ...f, key: `oauth2.mappedFields.${k}` }))];
    try {
      const res = await busy(save, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, body));
      clearErrors(fields);
      const now = (res && res.oauth2 && res.oauth2.providers) || providers;
      for (const r of sent) r.saved(now.find((q) => q.name === r.p.name) || providerPayload(r.values(), r.p));
      note.show(message('status', 'The OAuth2 options were saved.'));
    } catch (err) {
      showErrors(err, fields);
      const lines = errorLines(fieldErrors(err), sent.map((r) => r.p.name));
      note.show(h('div', { role: 'alert' }, h('p', null, err.message), lines.length ? h('ul', null, lines.map((l) => h('li', null, l))) : null));
    }
  });
  form.append(h('h2', null, 'OAuth2'),
    h('div', { class: 'check' }, enabled, h('label', { for: 'oa-enabled' }, 'Sign-in with OAuth2 enabled')),
    redirectBox(form),
    h('h3', null, 'Providers'), empty, list, add,
    h('details', { class: 'oa-mapped', open: maps.some(({ f }) => f.input.value) },
      h('summary', null, 'Mapped fields'),
      h('p', { class: 'oa-hint' }, 'The record fields an OAuth2 sign-up fills from the provider\'s user (empty: none).'),
      h('div', { class: 'oa-fields' }, maps.map(({ f }) => f.row))),
    note.slot, save);
  return form;
}

// linkedAccounts lists the OAuth2 accounts linked to the record r of c,
// each with an Unlink button.
export function linkedAccounts(c, r) {
  const list = h('ul');
  const out = h('div');
  const load = async () => {
    const q = new URLSearchParams({ perPage: '100', filter: `recordRef="${r.id}" && collectionRef="${c.id}"` });
    try {
      const res = await api('GET', `${collectionPath('_externalAuths', 'records')}?${q}`);
      const items = (res && res.items) || [];
      list.replaceChildren(...items.map((a) => h('li', null, `${String(a.provider)}: ${String(a.providerId)} `,
        h('button', {
          type: 'button', class: 'plain', onclick: async (e) => {
            try {
              await busy(e.currentTarget, () => api('DELETE', `${collectionPath('_externalAuths', 'records')}/${encodeURIComponent(a.id)}`));
              out.replaceChildren(message('status', 'The account was unlinked.'));
              load();
            } catch (err) {
              out.replaceChildren(message('alert', err.message));
            }
          },
        }, `Unlink ${String(a.provider)}`))));
      if (!items.length) list.replaceChildren(h('li', null, 'No linked OAuth2 account.'));
    } catch (err) {
      out.replaceChildren(message('alert', err.message));
    }
  };
  load();
  return h('section', { 'aria-label': 'Linked OAuth2 accounts' }, h('h3', null, 'Linked OAuth2 accounts'), list, out);
}
