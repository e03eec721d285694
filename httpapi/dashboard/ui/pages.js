// The pages of this version: sign in (with the code step when the
// superusers' MFA asks for it: the authenticator app's code when
// superusers may have one, else or on request a mailed code), forgotten password, the superuser's and
// the public confirm pages the account mails link to. Each returns {title,
// node}.

import { api, APIError, clearAuth, collectionPath, saveAuth, tokenPayload } from './api.js';
import { busy, h, message, notice, stylesheet } from './dom.js';
import { clearErrors, field, showErrors } from './forms.js';
import { signInWithPasskey, supported as passkeySupported } from './passkey.js';

const superusers = '_superusers';
const invalidToken = 'Invalid or expired token.';
// Sign-in and the public pages send no token: a stale one must not get in
// their way.
const guest = { guest: true };

// form builds a <form> of labelled fields (see field) and a submit
// button. On submit, with the button busy, it calls onSubmit(values, show)
// and shows an APIError it throws: each field's message next to the field,
// the rest in an alert before the button (a notice: see dom.notice).
function form({ fields, submit, onSubmit }) {
  const built = fields.map((f) => field(f.name, f.label, {
    type: f.type, attrs: { autocomplete: f.autocomplete, required: true, inputmode: f.inputmode },
  }));
  const inputs = Object.fromEntries(built.map((f) => [f.key, f.input]));
  const button = h('button', { type: 'submit' }, submit);
  const el = h('form', { novalidate: true });
  // The banner: cleared by any change to the form and by the next action.
  const note = notice(el);
  el.append(...built.map((f) => f.row), note.slot, h('div', null, button));
  const show = (node) => (node ? note.show(node) : note.clear());
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    show(null);
    clearErrors(built);
    const values = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v.value]));
    await busy(button, async () => {
      try {
        await onSubmit(values, show);
      } catch (err) {
        show(showErrors(err, built));
      }
    });
  });
  return { el, inputs, show };
}

// finish replaces a form whose request succeeded with its status message
// (and more).
function finish(f, text, ...more) {
  f.el.replaceWith(h('div', null, message('status', text), more));
}

function card(title, ...children) {
  return h('main', { class: 'card' }, h('p', { class: 'brand' }, 'strongbox'),
    h('h1', { tabindex: '-1' }, title), children);
}

function page(title, ...children) {
  return { title, node: card(title, ...children) };
}

// The state of a sign-in between its two steps (the MFA's mfaId and the
// code's otpId); cleared when the page is left.
let pending = null;

export function login() {
  if (pending) return pending.totp ? totpStep(pending) : otpStep(pending);
  const f = form({
    fields: [
      { name: 'identity', label: 'Email', type: 'email', autocomplete: 'username' },
      { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' },
    ],
    submit: 'Sign in',
    onSubmit: async (v) => {
      try {
        signedIn(await api('POST', collectionPath(superusers, 'auth-with-password'), { identity: v.identity, password: v.password }, guest));
      } catch (err) {
        if (!(err instanceof APIError && err.status === 401 && typeof err.body.mfaId === 'string')) throw err;
        // An authenticator app first, when superusers may have one: the
        // answer does not say which second factor is asked for.
        const methods = await api('GET', collectionPath(superusers, 'auth-methods'), undefined, guest).catch(() => null);
        const otp = !!(methods && methods.otp && methods.otp.enabled);
        if (methods && methods.totp && methods.totp.enabled === true) {
          pending = { mfaId: err.body.mfaId, email: v.identity, totp: true, otp };
          window.dispatchEvent(new HashChangeEvent('hashchange'));
          return;
        }
        await emailCode({ mfaId: err.body.mfaId, email: v.identity });
      }
    },
  });
  return page('Sign in', f.el, passkeyButton(f.show),
    h('p', { class: 'links' }, h('a', { href: '#/request-password-reset' }, 'Forgotten password?')));
}

// emailCode asks for a mailed code for the MFA sign-in p and shows the
// code step.
async function emailCode(p) {
  const otp = await api('POST', collectionPath(superusers, 'request-otp'), { email: p.email }, guest);
  pending = { mfaId: p.mfaId, otpId: otp && otp.otpId, email: p.email };
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

// startOver is the sign-in's way back to its first step.
function startOver() {
  return h('button', { type: 'button', class: 'plain', onclick: () => { pending = null; window.dispatchEvent(new HashChangeEvent('hashchange')); } }, 'Start over');
}

// totpStep asks for the code of the superuser's authenticator app, or a
// recovery code; when the account has no app and superusers have OTP, it
// falls back to the mailed code (and offers it from the start).
function totpStep(p) {
  const f = form({
    fields: [{ name: 'code', label: 'Authenticator code', type: 'text', autocomplete: 'one-time-code' }],
    submit: 'Sign in',
    onSubmit: async (v) => {
      try {
        signedIn(await api('POST', collectionPath(superusers, 'auth-with-totp'), { code: v.code, mfaId: p.mfaId }, guest));
      } catch (err) {
        if (p.otp && err instanceof APIError && err.status === 400 && err.message === 'TOTP is not enabled for this account.') return emailCode(p);
        throw err;
      }
    },
  });
  const mail = p.otp ? h('button', { type: 'button', class: 'plain', onclick: () => emailCode(p).catch((err) => f.show(message('alert', err.message))) }, 'Email me a code instead') : null;
  return page('Enter the code',
    h('p', { class: 'hint' }, 'Type the code your authenticator app shows, or one of your recovery codes.'),
    f.el, h('p', { class: 'links' }, startOver(), ' ', mail));
}

// passkeyButton is the login page's "Sign in with a passkey", when the
// browser can: usernameless, as a superuser. A superuser whose MFA asks
// for a second method is told to sign in with the password (its code
// step needs the email, which a passkey does not give).
function passkeyButton(show) {
  if (!passkeySupported()) return null;
  stylesheet('passkey.css');
  const button = h('button', { type: 'button', class: 'plain passkey-signin' }, 'Sign in with a passkey');
  button.addEventListener('click', () => busy(button, async () => {
    show(null);
    try {
      signedIn(await signInWithPasskey(superusers));
    } catch (err) {
      const mfa = err instanceof APIError && err.status === 401 && typeof err.body.mfaId === 'string';
      if (mfa) {
        // The authenticator app's code completes it, when superusers may
        // have one; the mailed code cannot (it needs the email).
        const methods = await api('GET', collectionPath(superusers, 'auth-methods'), undefined, guest).catch(() => null);
        if (methods && methods.totp && methods.totp.enabled === true) {
          pending = { mfaId: err.body.mfaId, totp: true, otp: false };
          window.dispatchEvent(new HashChangeEvent('hashchange'));
          return;
        }
      }
      show(message('alert', mfa ? 'This account asks for a second method: sign in with your password and code.' : err.message));
    }
  }));
  return h('div', { class: 'passkey-row' }, button);
}

function otpStep(p) {
  const f = form({
    fields: [{ name: 'password', label: 'Code', type: 'text', autocomplete: 'one-time-code', inputmode: 'numeric' }],
    submit: 'Sign in',
    onSubmit: async (v) => {
      signedIn(await api('POST', collectionPath(superusers, 'auth-with-otp'), { otpId: p.otpId, password: v.password, mfaId: p.mfaId }, guest));
    },
  });
  return page('Enter the code',
    h('p', { class: 'hint' }, 'A sign-in code was sent to ', h('strong', null, p.email), '.'),
    f.el, h('p', { class: 'links' }, startOver()));
}

function signedIn(res) {
  pending = null;
  if (!res || typeof res.token !== 'string') throw new APIError(0, { message: 'The server sent no token.' });
  saveAuth(res.token, res.record || null);
  location.hash = '#/logs';
}

// leaveLogin forgets a sign-in left half done.
export function leaveLogin() {
  pending = null;
}

export function signOut() {
  pending = null;
  clearAuth();
  location.hash = '#/login';
}

export function requestPasswordReset() {
  const f = form({
    fields: [{ name: 'email', label: 'Email', type: 'email', autocomplete: 'username' }],
    submit: 'Send reset link',
    onSubmit: async (v, show) => {
      await api('POST', collectionPath(superusers, 'request-password-reset'), { email: v.email }, guest);
      show(message('status', 'If the email exists, a reset link was sent to it.'));
    },
  });
  return page('Forgotten password', f.el, backToSignIn());
}

function backToSignIn() {
  return h('p', { class: 'links' }, h('a', { href: '#/login' }, 'Back to sign in'));
}

// collectionOf returns the collection a public page posts to: the one its
// token names (collectionId in the payload, which only picks the URL: the
// server checks the token), or null for a malformed token.
function collectionOf(token) {
  const p = tokenPayload(token);
  return p && typeof p.collectionId === 'string' && p.collectionId ? p.collectionId : null;
}

// confirmPasswordReset is the page for the token of a password-reset mail:
// of a superuser (collection given) or of the collection the token names.
export function confirmPasswordReset(token, collection) {
  const col = collection || collectionOf(token);
  if (!col) return page('Reset your password', message('alert', invalidToken));
  const f = form({
    fields: [
      { name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password' },
      { name: 'passwordConfirm', label: 'Confirm new password', type: 'password', autocomplete: 'new-password' },
    ],
    submit: 'Set new password',
    onSubmit: async (v) => {
      await api('POST', collectionPath(col, 'confirm-password-reset'), { token, password: v.password, passwordConfirm: v.passwordConfirm }, guest);
      finish(f, 'Your password has been changed.', collection === superusers ? backToSignIn() : null);
    },
  });
  return page('Reset your password', f.el);
}

// confirmVerification confirms on load.
export function confirmVerification(token) {
  const col = collectionOf(token);
  if (!col) return page('Email verification', message('alert', invalidToken));
  const slot = h('div', { 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Verifying…'));
  api('POST', collectionPath(col, 'confirm-verification'), { token }, guest).then(
    () => slot.replaceChildren(message('status', 'Your email has been verified.')),
    (err) => slot.replaceChildren(showErrors(err, [])),
  ).finally(() => slot.removeAttribute('aria-busy'));
  return page('Email verification', slot);
}

export function confirmEmailChange(token) {
  const p = tokenPayload(token);
  const col = collectionOf(token);
  if (!col) return page('Confirm new email', message('alert', invalidToken));
  const f = form({
    fields: [{ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' }],
    submit: 'Confirm new email',
    onSubmit: async (v) => {
      await api('POST', collectionPath(col, 'confirm-email-change'), { token, password: v.password }, guest);
      finish(f, 'Your email address has been changed.');
    },
  });
  const to = typeof p.newEmail === 'string' && p.newEmail
    ? h('p', { class: 'hint' }, 'Type your password to change your email address to ', h('strong', null, p.newEmail), '.')
    : null;
  return page('Confirm new email', to, f.el);
}
