// OAuth2 on the Collections screen: the collection's providers (client id,
// a write-only secret: left empty it keeps the stored one, as the server
// does; display name; the auth, token and user info URLs, empty for the
// preset's; PKCE: the preset's default, on or off), the mapped fields and the switch, saved with PATCH
// /api/collections/{id}; and a record's linked OAuth2 accounts (its
// _externalAuths rows), each unlinked by deleting its row. Every value is
// set as text or an attribute value.

import { api, collectionPath } from './api.js';
import { busy, h, message } from './dom.js';
import { clearErrors, field, quiet, showErrors } from './forms.js';

const mapped = ['id', 'name', 'username', 'avatarURL'];
const urls = [['authURL', 'auth URL'], ['tokenURL', 'token URL'], ['userInfoURL', 'user info URL']];
// The PKCE switch's states: the select's value and the provider's pkce.
const pkceStates = [['', 'preset default', null], ['on', 'on', true], ['off', 'off', false]];

// str is v as a field's value.
function str(v) {
  return v === undefined || v === null ? '' : String(v);
}

// providerRow is the inputs of the provider p (index i).
function providerRow(p, i, remove) {
  const n = `oa-${i}`;
  const row = {
    p,
    clientId: field('clientId', `${p.name} client ID`, { id: `${n}-clientId`, attrs: { value: str(p.clientId) } }),
    secret: field('clientSecret', `${p.name} client secret (empty keeps it)`, { id: `${n}-clientSecret`, type: 'password', attrs: { value: '', autocomplete: 'off' } }),
    displayName: field('displayName', `${p.name} display name`, { id: `${n}-displayName`, attrs: { value: str(p.displayName) } }),
    urls: urls.map(([k, l]) => ({ k, f: field(k, `${p.name} ${l} (empty: the preset's)`, { id: `${n}-${k}`, attrs: { value: str(p[k]) } }) })),
  };
  const pkce = pkceStates.find(([, , v]) => v === (p.pkce === undefined ? null : p.pkce)) || pkceStates[0];
  row.pkce = h('select', { id: `${n}-pkce` }, pkceStates.map(([v, l]) => h('option', { value: v, selected: v === pkce[0] }, l)));
  row.node = h('fieldset', { class: 'coll-panel' }, h('legend', null, String(p.name)),
    row.clientId.row, row.secret.row, row.displayName.row, row.urls.map(({ f }) => f.row),
    h('div', { class: 'field' }, h('label', { for: row.pkce.id }, `${p.name} PKCE`), row.pkce),
    h('button', { type: 'button', class: 'plain', onclick: () => remove(row) }, `Remove ${p.name}`));
  return row;
}

// oauth2Form edits the OAuth2 options of the collection c.
export function oauth2Form(c) {
  const o = c.oauth2 || {};
  const enabled = h('input', { id: 'oa-enabled', type: 'checkbox', checked: !!o.enabled });
  const maps = mapped.map((k) => ({ k, f: field(`mappedFields.${k}`, `Mapped field: ${k}`, { id: `oa-map-${k}`, attrs: { value: str((o.mappedFields || {})[k]) } }) }));
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
  const newName = field('newProvider', 'Provider name (e.g. google)', { id: 'oa-new', attrs: { value: '' } });
  const alert = h('div');
  const save = h('button', { type: 'submit' }, 'Save OAuth2');
  return h('form', {
    class: 'coll-panel', 'aria-label': 'OAuth2', onsubmit: async (e) => {
      e.preventDefault();
      alert.replaceChildren();
      const providers = rows.map((r) => {
        const p = { ...r.p, clientId: r.clientId.input.value, displayName: r.displayName.input.value };
        for (const { k, f } of r.urls) p[k] = f.input.value;
        p.pkce = pkceStates.find(([v]) => v === r.pkce.value)[2];
        if (r.secret.input.value) p.clientSecret = r.secret.input.value;
        return p;
      });
      const body = { oauth2: { enabled: enabled.checked, providers, mappedFields: Object.fromEntries(maps.map(({ k, f }) => [k, f.input.value])) } };
      // The fields, each with the key of its error: a provider's by its
      // place in the list now (data.oauth2.providers.0.clientId).
      const fields = [...rows.flatMap((r, i) => [r.clientId, r.secret, r.displayName, ...r.urls.map(({ f }) => f)]
        .map((f) => ({ ...f, key: `oauth2.providers.${i}.${f.input.name}` }))),
      ...maps.map(({ k, f }) => ({ ...f, key: `oauth2.mappedFields.${k}` }))];
      try {
        await busy(save, () => api('PATCH', `/api/collections/${encodeURIComponent(c.id)}`, body));
        clearErrors(fields);
        for (const r of rows) r.secret.input.value = '';
        alert.replaceChildren(message('status', 'The OAuth2 options were saved.'));
      } catch (err) {
        alert.replaceChildren(showErrors(err, fields, quiet));
      }
    },
  }, h('h2', null, 'OAuth2'), h('div', { class: 'check' }, enabled, h('label', { for: 'oa-enabled' }, 'OAuth2 enabled')),
  list, newName.row, h('button', {
    type: 'button', class: 'plain', onclick: () => {
      const name = newName.input.value.trim();
      if (name) add({ name, clientId: '', displayName: '' });
      newName.input.value = '';
    },
  }, 'Add provider'), maps.map(({ f }) => f.row), alert, save);
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
