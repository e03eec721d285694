// Drives, in headless Chromium, a superuser enrolling an authenticator app
// from the dashboard and signing in with it. TestDashboardTOTPBrowser
// (dashboard_totp_browser_test.go) runs it:
//
//	node totp.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package and
// JOURNEY a JSON object: base, chromium, shots, email and password (a
// superuser). The codes are computed here from the key the page shows, as
// an app would. It prints "ok NAME" per step, "shot PATH" per screenshot,
// "secret KEY" (the key shown), "qr PATH" (a screenshot of the QR code
// alone, for a decoder) and "FAIL NAME: DETAIL" for the first step that
// fails, then stops.
import path from 'node:path';
import { createHmac } from 'node:crypto';
import { assert, bothWidths, cfg, failed, launch, screenshot, step, watch } from './harness.mjs';

const wait = { timeout: 15000 };
const dash = cfg.base + '/_/';
const problems = [];
// The status of a refusal the step expects, which Chromium logs: 401 for
// the password step (a second factor asked), 400 for the wrong code.
let expectFailed = 0;

// totpCode is RFC 6238's code (HMAC-SHA1, 6 digits) of the 30 s step
// now + skew for a base32 key.
function totpCode(secret, skew = 0) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secret) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000) + skew));
  const sum = createHmac('sha1', key).update(msg).digest();
  const off = sum[sum.length - 1] & 0x0f;
  return String((sum.readUInt32BE(off) & 0x7fffffff) % 1000000).padStart(6, '0');
}

const browser = await launch();
const page = await browser.newPage();
page.setDefaultTimeout(wait.timeout);
await page.setViewport({ width: 1280, height: 900 });
watch(page, problems, (text) => expectFailed !== 0 && text.startsWith(`Failed to load resource: the server responded with a status of ${expectFailed} `));
const shot = (name) => screenshot(page, 'totp', name);

async function h1(text) {
  await page.waitForFunction((t) => document.querySelector('h1')?.textContent === t, wait, text);
}

async function signInWithPassword() {
  await page.goto(dash + '#/login', { waitUntil: 'load' });
  await page.waitForSelector('#f-identity');
  await page.type('#f-identity', cfg.email);
  await page.type('#f-password', cfg.password);
  await page.click('form button[type="submit"]');
}

let secret = '';

await step('sign in and turn TOTP on for superusers in the collection options', async () => {
  await signInWithPassword();
  await h1('Logs');
  await page.goto(dash + '#/collections?collection=_superusers');
  await page.waitForFunction(() => document.querySelector('#coll-title')?.textContent === '_superusers', wait);
  await page.click('#coll-settings');
  await page.waitForSelector('dialog.drawer[open] #tab-options');
  await page.$eval('#tab-options', (b) => b.click());
  await page.waitForSelector('#opt-totp-enabled');
  assert(!await page.$eval('#opt-totp-enabled', (i) => i.checked), 'TOTP is on before the switch');
  await page.click('#opt-totp-enabled');
  await page.click('form[aria-label="Authenticator app (TOTP)"] button[type="submit"]');
  await page.waitForFunction(() => [...document.querySelectorAll('[role="status"]')].some((s) => s.textContent === 'Authenticator app (TOTP): saved.'), wait);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('dialog.drawer'), wait);
});

await step('Escape cancels a setup and gives the focus back', async () => {
  await page.goto(dash + '#/settings/security');
  await h1('Security');
  await page.waitForSelector('#totp-start');
  await bothWidths(page, 'totp', 'off');
  await page.click('#totp-start');
  await page.waitForSelector('svg.qr');
  assert(await page.evaluate(() => document.activeElement?.id === 'totp-code'), 'the focus is not in the code field');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.activeElement?.id === 'totp-start', wait);
});

await step('set up: the QR code, the key, a wrong code, then the right one', async () => {
  await page.click('#totp-start');
  await page.waitForSelector('svg.qr');
  secret = (await page.$eval('.totp-secret', (c) => c.textContent)).replace(/ /g, '');
  assert(/^[A-Z2-7]{32}$/.test(secret), `the key shown is ${secret}`);
  console.log('secret ' + secret);
  const label = await page.$eval('svg.qr', (s) => s.getAttribute('aria-label'));
  assert(label, 'the QR code has no accessible name');
  const qr = path.join(cfg.shots, 'totp-qr.png');
  await (await page.$('svg.qr')).screenshot({ path: qr });
  console.log('qr ' + qr);
  await bothWidths(page, 'totp', 'setup');
  expectFailed = 400;
  await page.type('#totp-code', '000000' === totpCode(secret) ? '000001' : '000000');
  await page.click('form[aria-label="Turn on"] button[type="submit"]');
  await page.waitForFunction(() => [...document.querySelectorAll('[role="alert"]')].some((a) => a.textContent.includes('Invalid TOTP code.')), wait);
  expectFailed = 0;
  await page.$eval('#totp-code', (i) => { i.value = ''; });
  await page.type('#totp-code', totpCode(secret));
  await page.click('form[aria-label="Turn on"] button[type="submit"]');
  await page.waitForSelector('.totp-recovery');
  const codes = await page.$$eval('.totp-recovery li', (l) => l.map((x) => x.textContent));
  assert(codes.length === 10 && codes.every((c) => /^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/.test(c)), `recovery codes ${codes}`);
  assert(await page.evaluate(() => document.activeElement?.id === 'totp-rec-h'), 'the focus is not on the recovery codes');
  await bothWidths(page, 'totp', 'recovery-codes');
  await page.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent === 'I have saved them').click());
  await page.waitForFunction(() => document.querySelector('#totp-off-h')?.textContent === 'On', wait);
  assert((await page.$eval('.totp', (t) => t.textContent)).includes('10 recovery codes left'), 'the status does not count 10 recovery codes');
  await bothWidths(page, 'totp', 'on');
});

await step('sign in again: the password, then the authenticator code', async () => {
  await page.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent === 'Sign out').click());
  await h1('Sign in');
  expectFailed = 401;
  await signInWithPassword();
  await h1('Enter the code');
  expectFailed = 0;
  const label = await page.$eval('label[for="f-code"]', (l) => l.textContent);
  assert(label === 'Authenticator code', `the code's label is ${label}`);
  await bothWidths(page, 'totp', 'sign-in-code');
  // The confirming code's step is spent: the next one is accepted (±1 step).
  await page.type('#f-code', totpCode(secret, 1));
  await page.click('form button[type="submit"]');
  await page.waitForFunction(() => location.hash === '#/logs', wait);
  await h1('Logs');
});

await step('no console error, page error or dialog', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
