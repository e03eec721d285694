// Passkeys (WebAuthn) in the dashboard: the signed-in superuser's own
// (listed, added, removed on the Passkeys screen) and the sign-in with
// one on the login page. The browser speaks the server's JSON forms as
// they are: PublicKeyCredential.parseCreationOptionsFromJSON and
// parseRequestOptionsFromJSON read the options, and the credential's
// toJSON() is what goes back. supported, ceremonyBody and passkeyLine are
// pure (no DOM): Node's test runner imports them.

import { api, APIError, collectionPath } from './api.js';
import { busy, h, message, notice, stylesheet } from './dom.js';
import { dateText } from './dates.js';
import { field, showErrors } from './forms.js';

const superusers = '_superusers';

// supported reports whether the browser w can run the ceremonies with the
// JSON forms (Chromium 129+, Firefox 119+, Safari 18+).
export function supported(w = globalThis) {
  const P = w && w.PublicKeyCredential;
  return !!(P && typeof P.parseCreationOptionsFromJSON === 'function' && typeof P.parseRequestOptionsFromJSON === 'function' &&
    w.navigator && w.navigator.credentials);
}

// ceremonyBody is what the server takes back from a ceremony: the
// challenge's id, the credential's JSON form, and the name of a new one.
export function ceremonyBody(challengeId, credentialJSON, name) {
  const body = { challengeId: String(challengeId || ''), credential: credentialJSON };
  if (name !== undefined) body.name = String(name).trim();
  return body;
}

// passkeyLine describes a passkey of the list: when it was added and last
// used, as the API writes dates.
export function passkeyLine(p) {
  const used = p && p.lastUsed ? `last used ${dateText(p.lastUsed)}` : 'never used';
  return `added ${dateText(p && p.created)}, ${used}`;
}

// why turns the browser's refusal of a ceremony into an APIError to show.
function why(err) {
  if (err instanceof APIError) return err;
  const text = err && err.name === 'NotAllowedError' ? 'The passkey request was cancelled or timed out.'
    : err && err.name === 'InvalidStateError' ? 'This authenticator holds a passkey of this account already.'
      : `The browser refused the passkey: ${err && err.message || err}`;
  return new APIError(0, { message: text });
}

// signInWithPasskey signs in to collection usernameless: the options, the
// browser's assertion, then auth-with-passkey, whose answer it returns
// (the §2.6 result; a 401 {mfaId} throws, as api does).
export async function signInWithPasskey(collection = superusers) {
  const o = await api('POST', collectionPath(collection, 'auth-with-passkey/options'), {}, { guest: true });
  let cred;
  try {
    cred = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(o.publicKey) });
  } catch (err) {
    throw why(err);
  }
  return api('POST', collectionPath(collection, 'auth-with-passkey'), ceremonyBody(o.challengeId, cred.toJSON()), { guest: true });
}

// addPasskey registers a new passkey named name for the signed-in
// superuser and returns the server's {id, name, created}.
async function addPasskey(name) {
  const o = await api('POST', collectionPath(superusers, 'passkeys/register/options'), {});
  let cred;
  try {
    cred = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(o.publicKey) });
  } catch (err) {
    throw why(err);
  }
  return api('POST', collectionPath(superusers, 'passkeys/register'), ceremonyBody(o.challengeId, cred.toJSON(), name));
}

// passkeysPage is the Passkeys screen: the superuser's passkeys, each
// with Remove, and a form to add one.
export function passkeysPage() {
  const list = h('ul', { class: 'passkeys', 'aria-live': 'polite' });
  const state = h('p', { class: 'hint' });
  const nameField = field('name', 'Name of the new passkey', { id: 'passkey-name', attrs: { maxlength: 100, autocomplete: 'off', placeholder: 'e.g. Work laptop' } });
  const name = nameField.input;
  const add = h('button', { type: 'submit' }, 'Add a passkey');
  const form = h('form', { 'aria-label': 'Add a passkey', novalidate: true }, nameField.row);
  const note = notice(form);
  form.append(note.slot, h('div', null, add));

  async function load() {
    let ps;
    try {
      const c = await api('GET', `/api/collections/${superusers}`);
      if (!c || !c.passkey || !c.passkey.enabled) {
        state.replaceChildren('Passkeys are off for superusers: turn them on in Collections, _superusers, Options.');
      } else state.replaceChildren(supported() ? '' : 'This browser cannot use passkeys.');
      ps = await api('GET', collectionPath(superusers, 'passkeys'));
    } catch (err) {
      note.show(message('alert', err.message));
      return;
    }
    list.replaceChildren(...(ps.length ? ps.map(row) : [h('li', { class: 'hint' }, 'No passkey yet.')]));
  }

  function row(p) {
    const remove = h('button', { type: 'button', class: 'plain danger', 'aria-label': `Remove the passkey ${p.name}` }, 'Remove');
    remove.addEventListener('click', () => busy(remove, async () => {
      try {
        await api('DELETE', collectionPath(superusers, 'passkeys/' + encodeURIComponent(p.id)));
        note.show(message('status', `Removed the passkey ${p.name}.`));
        await load();
      } catch (err) {
        note.show(message('alert', err.message));
      }
    }));
    return h('li', null, h('div', { class: 'passkey-text' }, h('span', { class: 'passkey-name' }, p.name),
      h('span', { class: 'hint' }, passkeyLine(p))), remove);
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (add.disabled) return;
    await busy(add, async () => {
      try {
        const p = await addPasskey(name.value);
        name.value = '';
        note.show(message('status', `Added the passkey ${p.name}.`));
        await load();
      } catch (err) {
        note.show(showErrors(why(err), [nameField]));
      }
    });
  });
  load();
  stylesheet('passkey.css');
  const node = h('main', { class: 'page passkeys-page' }, h('h1', { tabindex: '-1' }, 'Passkeys'),
    h('p', { class: 'hint' }, 'Sign in to this dashboard with a passkey instead of your password.'), state, list, form);
  return { title: 'Passkeys', node };
}
