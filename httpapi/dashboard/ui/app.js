// The dashboard: a hash router over PocketBase's dashboard routes, and the
// signed-in shell (the main navigation and Sign out).

import { api, clearAuth, collectionPath, loadAuth, saveAuth } from './api.js';
import { h } from './dom.js';
import { logsPage } from './logs.js';
import * as pages from './pages.js';
import { backups } from './backups.js';
import { appSettings, mailSettings } from './settings.js';
import { collectionsPage } from './collections.js';
import { security } from './security.js';
import { passkeysPage } from './passkey.js';

const nav = [
  ['#/logs', 'Logs'],
  ['#/collections', 'Collections'],
  ['#/settings', 'Settings'],
  ['#/settings/backups', 'Backups'],
  ['#/passkeys', 'Passkeys'],
];

// Public pages with a token: the pattern's prefix (before the token) and
// the page, for the collection the token names and PocketBase's /users/
// aliases.
const tokenPages = [
  ['/confirm-password-reset/', (t) => pages.confirmPasswordReset(t, '_superusers')],
  ['/auth/confirm-password-reset/', (t) => pages.confirmPasswordReset(t)],
  ['/users/confirm-password-reset/', (t) => pages.confirmPasswordReset(t)],
  ['/auth/confirm-verification/', pages.confirmVerification],
  ['/users/confirm-verification/', pages.confirmVerification],
  ['/auth/confirm-email-change/', pages.confirmEmailChange],
  ['/users/confirm-email-change/', pages.confirmEmailChange],
];

// route returns the path of the hash (#/logs?logId=… is /logs).
function route() {
  const hash = location.hash.replace(/^#/, '');
  const path = hash.split('?')[0] || '/';
  return path.startsWith('/') ? path : '/' + path;
}

function decode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

// resolve returns the page for path, or a hash to go to instead.
function resolve(path) {
  for (const [prefix, make] of tokenPages) {
    if (path.startsWith(prefix) && path.length > prefix.length) return make(decode(path.slice(prefix.length)));
  }
  const signedIn = loadAuth() !== null;
  if (path === '/request-password-reset') return pages.requestPasswordReset();
  if (path === '/login') return signedIn ? '#/logs' : pages.login();
  if (!signedIn) return '#/login';
  if (path === '/logs') return shell(path, logsPage());
  if (path === '/settings/backups') return shell(path, backups());
  if (path === '/settings') return shell(path, appSettings());
  if (path === '/settings/mail') return shell(path, mailSettings());
  if (path === '/settings/security') return shell(path, security());
  if (path === '/collections') return shell(path, collectionsPage());
  if (path === '/passkeys') return shell(path, passkeysPage());
  return '#/logs';
}

// shell wraps a signed-in screen in the header with the main navigation.
function shell(path, p) {
  const links = nav.map(([href, text]) =>
    h('li', null, h('a', { href, 'aria-current': href === '#' + path ? 'page' : null }, text)));
  const header = h('header', { class: 'top' },
    h('p', { class: 'brand' }, 'strongbox'),
    h('nav', { 'aria-label': 'Main' }, h('ul', null, links)),
    h('button', { type: 'button', class: 'plain signout', onclick: pages.signOut }, 'Sign out'));
  return { title: p.title, node: h('div', null, header, p.node) };
}

let last = null;

function render() {
  const path = route();
  if (path !== '/login') pages.leaveLogin();
  const p = resolve(path);
  if (typeof p === 'string') {
    location.replace(p);
    return;
  }
  document.title = `${p.title} - strongbox`;
  const app = document.getElementById('app');
  app.replaceChildren(p.node);
  // Move the focus to the page: its first field, or its heading, so that a
  // keyboard or screen reader user starts there.
  const target = p.node.querySelector('input') || p.node.querySelector('h1');
  if (target && (last !== null || target.tagName === 'INPUT')) target.focus();
  last = path;
}

// refresh renews a stored session once at start, and forgets one the
// server no longer accepts.
async function refresh() {
  if (!loadAuth()) return;
  try {
    const res = await api('POST', collectionPath('_superusers', 'auth-refresh'));
    if (res && typeof res.token === 'string') saveAuth(res.token, res.record || null);
  } catch (err) {
    if (err.status === 401 || err.status === 403 || err.status === 404) {
      clearAuth();
      render();
    }
  }
}

window.addEventListener('hashchange', render);
render();
refresh();
