// Drives the dashboard's passkeys in headless Chromium with its virtual
// authenticator (DevTools WebAuthn domain: ctap2, internal, resident keys,
// user verification). TestDashboardPasskeyBrowser
// (dashboard_passkey_browser_test.go) runs it:
//
//	node passkey.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package and
// JOURNEY a JSON object: base (http://localhost:PORT, the server's app
// URL), otherApp (the same host on another port), chromium, shots, email
// and password (a superuser). It prints "ok NAME" per step, "shot PATH"
// per screenshot and "FAIL NAME: DETAIL" for the first step that fails,
// then stops.
import { assert, bothWidths, cfg, failed, launch, step, watch } from './harness.mjs';

const wait = { timeout: 15000 };
const dash = cfg.base + '/_/';
const problems = [];
// The refusals the page provokes are answered 400, which Chromium logs.
let expectFailed = false;

const browser = await launch();
const page = await browser.newPage();
page.setDefaultTimeout(wait.timeout);
await page.setViewport({ width: 1280, height: 900 });
watch(page, problems, (text) => expectFailed && /status of 400/.test(text));

const cdp = await page.createCDPSession();
await cdp.send('WebAuthn.enable');
const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
  options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
});

async function h1(text) {
  await page.waitForFunction((t) => document.querySelector('h1') && document.querySelector('h1').textContent === t, wait, text);
}

async function status(text) {
  await page.waitForFunction((t) => [...document.querySelectorAll('[role="status"]')].some((s) => s.textContent === t), wait, text);
}

// rawSignIn runs, in the page, a usernameless sign-in by the browser's
// own ceremony, with the signature of its JSON form changed when tamper,
// and posts it (twice with replay): it returns the statuses and messages.
async function rawSignIn(tamper, replay) {
  return page.evaluate(async (tamper, replay) => {
    const post = async (path, body) => {
      const r = await fetch('/api/collections/_superusers/' + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      return [r.status, (await r.json()).message || 'ok'];
    };
    const o = await (await fetch('/api/collections/_superusers/auth-with-passkey/options', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).json();
    const cred = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(o.publicKey) });
    const json = cred.toJSON();
    if (tamper) {
      const s = json.response.signature;
      json.response.signature = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);
    }
    const out = [await post('auth-with-passkey', { challengeId: o.challengeId, credential: json })];
    if (replay) out.push(await post('auth-with-passkey', { challengeId: o.challengeId, credential: json }));
    return out;
  }, tamper, replay);
}

await step('sign in with the password and turn passkeys on for superusers', async () => {
  await page.goto(dash + '#/login', { waitUntil: 'load' });
  await page.waitForSelector('#f-identity');
  await page.type('#f-identity', cfg.email);
  await page.type('#f-password', cfg.password);
  await page.click('form button[type="submit"]');
  await h1('Logs');
  await page.goto(dash + '#/collections?collection=_superusers');
  await page.waitForFunction(() => document.querySelector('#coll-title')?.textContent === '_superusers', wait);
  await page.click('#coll-settings');
  await page.waitForSelector('dialog.drawer[open] #tab-options');
  await page.$eval('#tab-options', (b) => b.click());
  await page.waitForSelector('#opt-passkey-enabled');
  if (!await page.$eval('#opt-passkey-enabled', (i) => i.checked)) await page.click('#opt-passkey-enabled');
  await page.click('form[aria-label="Passkeys"] button[type="submit"]');
  await status('Passkeys: saved.');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('dialog.drawer'), wait);
});

await step('register a passkey on the Passkeys screen', async () => {
  await page.goto(dash + '#/passkeys');
  await h1('Passkeys');
  await page.waitForFunction(() => document.querySelector('.passkeys li')?.textContent === 'No passkey yet.', wait);
  await page.type('#passkey-name', 'Virtual authenticator');
  await page.click('form[aria-label="Add a passkey"] button[type="submit"]');
  await status('Added the passkey Virtual authenticator.');
  await page.waitForFunction(() => document.querySelector('.passkeys .passkey-name')?.textContent === 'Virtual authenticator', wait);
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  assert(credentials.length === 1 && credentials[0].isResidentCredential, `the authenticator holds ${JSON.stringify(credentials.map((c) => c.isResidentCredential))}`);
  assert(credentials[0].rpId === new URL(cfg.base).hostname, `the credential's rpId is ${credentials[0].rpId}`);
  await bothWidths(page, 'passkey', 'list');
});

await step('sign out, then sign in usernameless with the passkey', async () => {
  await page.click('header.top .signout');
  await h1('Sign in');
  await page.waitForSelector('.passkey-signin');
  await bothWidths(page, 'passkey', 'login');
  await page.click('.passkey-signin');
  await page.waitForFunction(() => location.hash === '#/logs', wait);
  await h1('Logs');
});

await step('refuse a tampered signature and a replayed challenge', async () => {
  expectFailed = true;
  const tampered = await rawSignIn(true, false);
  assert(tampered[0][0] === 400 && tampered[0][1] === 'Invalid passkey.', `tampered: ${JSON.stringify(tampered)}`);
  const replayed = await rawSignIn(false, true);
  assert(replayed[0][0] === 200, `first sending: ${JSON.stringify(replayed)}`);
  assert(replayed[1][0] === 400 && replayed[1][1] === 'Invalid or expired passkey challenge.', `replayed: ${JSON.stringify(replayed)}`);
  expectFailed = false;
});

await step('refuse an assertion for another origin', async () => {
  // The server now expects the same host on another port: the browser
  // signs for this page's origin, which the server must refuse.
  const token = await page.evaluate(() => JSON.parse(localStorage.getItem('pocketbase_auth')).token);
  const patch = async (appURL) => page.evaluate(async (t, u) => (await fetch('/api/settings', {
    method: 'PATCH', headers: { 'Content-Type': 'application/json', Authorization: t }, body: JSON.stringify({ meta: { appURL: u } }),
  })).status, token, appURL);
  assert(await patch(cfg.otherApp) === 200, 'could not change the app URL');
  expectFailed = true;
  const other = await rawSignIn(false, false);
  expectFailed = false;
  assert(await patch(cfg.base) === 200, 'could not put the app URL back');
  assert(other[0][0] === 400 && other[0][1] === 'Invalid passkey.', `other origin: ${JSON.stringify(other)}`);
});

await step('no console error, page error or dialog', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
