// Drives the dashboard's two-step sign-in, the users collection's OTP
// switch and the Collections screen at a phone's width in headless
// Chromium. TestDashboardMFABrowser (dashboard_mfa_browser_test.go) runs
// it:
//
//	node mfa.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package and
// JOURNEY a JSON object: base, chromium, shots, email and password (a
// superuser whose collection asks for MFA with OTP). When the page asks for
// the code it prints "need-code" and reads the code as one line of its
// standard input. It prints "ok NAME" per step, "shot PATH" per screenshot,
// "width N" for the page's scroll width at 360 px, and "FAIL NAME: DETAIL"
// for the first step that fails, then stops.
import path from 'node:path';
import { assert, cfg, failed, launch, screenshot, step, watch } from './harness.mjs';
import readline from 'node:readline';

const stdin = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const wait = { timeout: 15000 };
const dash = cfg.base + '/_/';
const problems = [];
// The password step is answered 401 (MFA asked), which Chromium logs.
let expectFailedRequest = false;

const browser = await launch();

const page = await browser.newPage();
page.setDefaultTimeout(wait.timeout);
await page.setViewport({ width: 1100, height: 800 });
watch(page, problems, (text) => expectFailedRequest && /^Failed to load resource: the server responded with a status of 401/.test(text));

const shot = (name) => screenshot(page, 'mfa', name);

async function clickText(sel, text) {
  await page.waitForFunction((s, t) => [...document.querySelectorAll(s)].some((b) => b.textContent === t && !b.disabled), wait, sel, text);
  await page.evaluate((s, t) => [...document.querySelectorAll(s)].find((b) => b.textContent === t).click(), sel, text);
}

async function h1(text) {
  await page.waitForFunction((t) => document.querySelector('h1') && document.querySelector('h1').textContent === t, wait, text);
}

await step('sign in with the password, then the mailed code', async () => {
  await page.goto(dash + '#/login', { waitUntil: 'load' });
  await page.waitForSelector('#f-identity');
  await page.type('#f-identity', cfg.email);
  await page.type('#f-password', cfg.password);
  expectFailedRequest = true;
  await page.click('form button[type="submit"]');
  await h1('Enter the code');
  expectFailedRequest = false;
  const label = await page.$eval('label[for="f-password"]', (l) => l.textContent);
  assert(label === 'Code', `the code's label is ${label}`);
  await shot('code');
  console.log('need-code');
  const code = (await stdin.next()).value;
  assert(code, 'no code on the standard input');
  await page.type('#f-password', code.trim());
  await page.click('form button[type="submit"]');
  await page.waitForFunction(() => location.hash === '#/logs', wait);
  await h1('Logs');
});

await step('enable OTP on users', async () => {
  await page.goto(dash + '#/collections?collection=users');
  await h1('Collections');
  await page.waitForFunction(() => document.querySelector('#coll-title')?.textContent === 'users', wait);
  await page.click('#coll-settings');
  await page.waitForSelector('dialog.drawer[open] #tab-options');
  await page.$eval('#tab-options', (b) => b.click());
  await page.waitForSelector('#opt-otp-enabled');
  if (!await page.$eval('#opt-otp-enabled', (i) => i.checked)) await page.click('#opt-otp-enabled');
  await page.click('form[aria-label="One-time password (OTP)"] button[type="submit"]');
  await page.waitForFunction(() => [...document.querySelectorAll('[role="status"]')].some((s) => s.textContent === 'One-time password (OTP): saved.'), wait);
});

await step('no horizontal scroll at 360 px', async () => {
  await page.setViewport({ width: 360, height: 740 });
  for (const view of ['options', 'records']) {
    if (view === 'records') {
      await page.keyboard.press('Escape');
      await page.waitForFunction(() => !document.querySelector('dialog.drawer'), wait);
    }
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    console.log(`width ${view} ${w}`);
    assert(w <= 360, `the ${view} view scrolls sideways: scrollWidth ${w}`);
    await shot(`narrow-${view}`);
  }
});

await step('no console error, page error or dialog', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
