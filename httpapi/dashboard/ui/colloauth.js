// OAuth2 on the Collections screen: the collection's providers (client id,
// a write-only secret: left empty it keeps the stored one, as the server
// does; display name; the auth, token and user info URLs, empty for the
// preset's; PKCE: the preset's default, on or off), the mapped fields and the switch, saved with PATCH
// /api/collections/{id}; and a record's linked OAuth2 accounts (its
// _externalAuths rows), each unlinked by deleting its row. Every value is
// set as text or an attribute value.

import { api, APIError, collectionPath } from './api.js';
import { busy, h, message } from './dom.js';

const mapped = ['id', 'name', 'username', 'avatarURL'];
const urls = [['authURL', 'auth URL'], ['tokenURL', 'token URL'], ['userInfoURL', 'user info URL']];
// The PKCE switch's states: the select's value and the provider's pkce.
const pkceStates = [['', 'preset default', null], ['on', 'on', true], ['off', 'off', false]];

function input(id, label, value, attrs = {}) {
  const el = h('input', { id, type: 'text', value: value === undefined || value === null ? '' : String(value), 'aria-describedby': `err-${id}`, ...attrs });
  return { el, wrap: h('div', { class: 'field' }, h('label', { for: id }, label), el, h('p', { id: `err-${id}`, class: 'field-error' })) };
}

function errAt(err, path) {
  let f = err instanceof APIError ? err.data : null;
  for (const k of path) f = f && typeof f === 'object' ? f[k] : null;
  return f && typeof f === 'object' && typeof f.message === 'string' ? f.message : '';
}

// providerRow is the inputs of the provider p (index i).
function providerRow(p, i, remove) {
  const n = `oa-${i}`;
  const row = {
    p,
    clientId: input(`${n}-clientId`, `${p.name} client ID`, p.clientId),
    secret: input(`${n}-clientSecret`, `${p.name} client secret (empty keeps it)`, '', { type: 'password', autocomplete: 'off' }),
    displayName: input(`${n}-displayName`, `${p.name} display name`, p.displayName),
    urls: urls.map(([k, l]) => ({ k, f: input(`${n}-${k}`, `${p.name} ${l} (empty: the preset's)`, p[k]) })),
  };
  const pkce = pkceStates.find(([, , v]) => v === (p.pkce === undefined ? null : p.pkce)) || pkceStates[0];
  row.pkce = h('select', { id: `${n}-pkce` }, pkceStates.map(([v, l]) => h('option', { value: v, selected: v === pkce[0] }, l)));
  row.node = h('fieldset', { class: 'coll-panel' }, h('legend', null, String(p.name)),
    row.clientId.wrap, row.secret.wrap, row.displayName.wrap, row.urls.map(({ f }) => f.wrap),
    h('div', { class: 'field' }, h('label', { for: row.pkce.id }, `${p.name} PKCE`), row.pkce),
    h('button', { type: 'button', class: 'plain', onclick: () => remove(row) }, `Remove ${p.name}`));
  return row;
}

// oauth2Form edits the OAuth2 options of the collection c.
export function oauth2Form(c) {
  const o = c.oauth2 || {};
  const enabled = h('input', { id: 'oa-enabled', type: 'checkbox', checked: !!o.enabled });
  const maps = mapped.map((k) => ({ k, f: input(`oa-map-${k}`, `Mapped field: ${k}`, (o.mappedFields || {})[k]) }));
  const list = h('div');
  let rows = [];
  let seq = 0;
  const remove = (row) => {
    rows = rows.filter((r) => r !== row);
    row.node.remove();
  };
  const add = (p) => {
    const row = providerRow(p, seq++, remove);
    rows.push(row);
    list.append(row.node);
  };
  (o.providers || []).forEach(add);
  const newName = input('oa-new', 'Provider name (e.g. google)', '');
  const alert = h('div');
  const save = h('button', { type: 'submit' }, 'Save OAuth2');
  return h('form', {
    class: 'coll-panel', 'aria-label': 'OAuth2', onsubmit: async (e) => {
      e.preventDefault();
      alert.replaceChildren();
      const providers = rows.map((r) => {
        const p = { ...r.p, clientId: r.clientId.el.value, displayName: r.displayName.el.value };
        for (const { k, f } of r.urls) p[k] = f.el.value;
        p.pkce = pkceStates.find(([v]) => v === r.pkce.value)[2];
        if (r.secret.el.value) p.clientSecret = r.secret.el.value;
        return p;
      });
      const body = { oauth2: { enabled: enabled.checked, providers, mappedFields: Object.fromEntries(maps.map(({ k, f }) => [k, f.el.value])) } };
      const errs = [...rows.flatMap((r, i) => [[r.clientId, 'clientId'], [r.secret, 'clientSecret'], [r.displayName, 'displayName'],
        ...r.urls.map(({ k, f }) => [f, k])].map(([f, k]) => [f, ['oauth2', 'providers', String(i), k]])), ...maps.map(({ k, f }) => [f, ['oauth2', 'mappedFields', k]])];
      try {
        await busy(save, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, body));
        for (const [f] of errs) document.getElementById(`err-${f.el.id}`).textContent = '';
        for (const r of rows) r.secret.el.value = '';
        alert.replaceChildren(message('status', 'The OAuth2 options were saved.'));
      } catch (err) {
        for (const [f, path] of errs) document.getElementById(`err-${f.el.id}`).textContent = errAt(err, path);
        alert.replaceChildren(message('alert', err.message));
      }
    },
  }, h('h2', null, 'OAuth2'), h('div', { class: 'check' }, enabled, h('label', { for: 'oa-enabled' }, 'OAuth2 enabled')),
  list, newName.wrap, h('button', {
    type: 'button', class: 'plain', onclick: () => {
      const name = newName.el.value.trim();
      if (name) add({ name, clientId: '', displayName: '' });
      newName.el.value = '';
    },
  }, 'Add provider'), maps.map(({ f }) => f.wrap), alert, save);
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
