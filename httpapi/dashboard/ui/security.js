// #/settings/security: the signed-in superuser's own authenticator app
// (TOTP), over GET /api/collections/_superusers/totp and POST …/totp/setup,
// …/totp/confirm and …/totp/disable. Setting one up shows the otpauth URI
// as a QR code drawn by qr.js (and its secret as text, for typing it in),
// asks for a code to confirm, then shows the ten recovery codes once.
// Escape cancels a setup and gives the focus back to its button. Every
// value is set as text.

import { api, collectionPath } from './api.js';
import { busy, h, message, notice, stylesheet } from './dom.js';
import { clearErrors, field, showErrors } from './forms.js';
import { qrSVG } from './qr.js';
import { settingsNav } from './settings.js';

const su = '_superusers';

// groups writes a secret in groups of four, as apps show it.
export function groups(secret) {
  return String(secret).replace(/(.{4})(?=.)/g, '$1 ');
}

// codeForm is a one-field form (code) whose submit calls send(code) with
// the button busy, showing the envelope's errors next to the field.
function codeForm(label, submit, send) {
  const f = field('code', label, { id: 'totp-code', attrs: { autocomplete: 'one-time-code', spellcheck: 'false', required: true } });
  const button = h('button', { type: 'submit' }, submit);
  const form = h('form', { class: 'totp-form', 'aria-label': submit, novalidate: true });
  const note = notice(form);
  form.append(f.row, note.slot, h('div', null, button));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    clearErrors([f]);
    await busy(button, async () => {
      try {
        await send(f.input.value.trim());
      } catch (err) {
        note.show(showErrors(err, [f]));
      }
    });
  });
  return { form, input: f.input };
}

export function security() {
  stylesheet('settings.css');
  const body = h('div', { class: 'totp', 'aria-live': 'polite' });
  const node = h('main', { class: 'page settings security' },
    h('h1', { tabindex: '-1' }, 'Security'), settingsNav('security'),
    h('section', { 'aria-labelledby': 'totp-h' }, h('h2', { id: 'totp-h' }, 'Authenticator app (TOTP)'), body));
  const show = (...children) => body.replaceChildren(...children);

  // load shows the state the server reports, focusing target (a
  // selector) in it once drawn.
  async function load(target) {
    let methods;
    let st;
    try {
      [methods, st] = await Promise.all([
        api('GET', collectionPath(su, 'auth-methods'), undefined, { guest: true }),
        api('GET', collectionPath(su, 'totp')),
      ]);
    } catch (err) {
      show(message('alert', err.message));
      return;
    }
    if (!methods || !methods.totp || methods.totp.enabled !== true) {
      show(h('p', { class: 'hint' }, 'Authenticator apps are off for superusers. Turn TOTP on in the options of the _superusers collection (Collections) to set one up.'),
        h('p', null, h('a', { href: '#/collections?collection=_superusers' }, 'Open _superusers')));
      return;
    }
    if (st && st.enabled) enabled(st);
    else idle();
    if (target) body.querySelector(target)?.focus();
  }

  function idle() {
    const start = h('button', { type: 'button', id: 'totp-start' }, 'Set up an authenticator app');
    const note = notice(null);
    start.addEventListener('click', () => busy(start, async () => {
      try {
        setup(await api('POST', collectionPath(su, 'totp/setup')));
      } catch (err) {
        note.show(message('alert', err.message));
      }
    }));
    show(h('p', null, 'Off. Once set up, every sign-in of yours asks for a code of the app after the password.'), note.slot, start);
  }

  function setup(res) {
    const cancel = () => load('#totp-start');
    const confirm = codeForm('Code from the app', 'Turn on', async (code) => {
      const done = await api('POST', collectionPath(su, 'totp/confirm'), { code });
      recovery(done.recoveryCodes || []);
    });
    const cancelButton = h('button', { type: 'button', class: 'plain', onclick: cancel }, 'Cancel');
    const panel = h('div', { class: 'totp-setup', role: 'group', 'aria-labelledby': 'totp-scan' },
      h('p', { id: 'totp-scan' }, 'Scan this QR code with your authenticator app, or type the key in it.'),
      qrSVG(String(res.uri), 'QR code of the authenticator setup link'),
      h('p', null, 'Key: ', h('code', { class: 'totp-secret' }, groups(res.secret))),
      confirm.form, cancelButton);
    panel.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') {
        ev.preventDefault();
        cancel();
      }
    });
    show(panel);
    confirm.input.focus();
  }

  function recovery(codes) {
    const done = h('button', { type: 'button', onclick: () => load('#totp-off-h') }, 'I have saved them');
    show(message('status', 'The authenticator app is on.'),
      h('h3', { id: 'totp-rec-h', tabindex: '-1' }, 'Recovery codes'),
      h('p', { class: 'hint' }, 'Each works once in place of a code, if the app is lost. Save them now: they are not shown again.'),
      h('ol', { class: 'totp-recovery' }, codes.map((c) => h('li', null, h('code', null, String(c))))),
      done);
    body.querySelector('#totp-rec-h').focus();
  }

  function enabled(st) {
    const off = codeForm('Code from the app, or a recovery code', 'Turn off', async (code) => {
      await api('POST', collectionPath(su, 'totp/disable'), { code });
      await load('#totp-start');
    });
    show(h('h3', { id: 'totp-off-h', tabindex: '-1' }, 'On'),
      h('p', null, `Every sign-in asks for a code of the app. ${st.recoveryCodes} recovery codes left.`),
      off.form);
  }

  load();
  return { title: 'Security', node };
}
