// Drives the OAuth2 options of the dashboard's Collections screen in
// headless Chromium. TestDashboardOAuth2Browser
// (dashboard_oauth2_browser_test.go) runs it:
//
//	node oauth2.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package and
// JOURNEY a JSON object: base, chromium, shots, email and password (the
// superuser, as for journey.mjs), redirect (the redirect URL the form must
// show: under the application URL the test set), clientId and
// clientSecret (of the GitHub provider it adds to users), badURL (an auth
// URL the server refuses, typed into an OIDC provider) and badURLError
// (the server's message for it).
// It prints "ok NAME" per step, "shot PATH" per screenshot, "alert TEXT"
// for the banner of the refused save, and "FAIL NAME: DETAIL" for the
// first step that fails, then stops.
import path from 'node:path';
import { assert, cfg, failed, launch, step, watch } from './harness.mjs';

const wait = { timeout: 15000 };
const dash = cfg.base + '/_/';

// openOAuth2 goes, signed in, to the OAuth2 options of the collection
// name. It is the only place that knows the Collections screen's
// navigation (the collection chosen by the deep link, its settings panel,
// the Options tab).
async function openOAuth2(page, name) {
  await page.goto(dash + '#/collections?collection=' + encodeURIComponent(name));
  await page.waitForFunction((n) => document.querySelector('#coll-title')?.textContent === n, wait, name);
  await page.click('#coll-settings');
  await page.waitForSelector('dialog.drawer[open] #tab-options');
  await page.$eval('#tab-options', (b) => b.click());
  await page.waitForSelector('form[aria-label="OAuth2"]');
}

// clickText clicks the first element matching sel whose text is text.
async function clickText(page, sel, text) {
  await page.waitForFunction((s, t) => [...document.querySelectorAll(s)].some((b) => b.textContent === t && !b.disabled), wait, sel, text);
  await page.evaluate((s, t) => [...document.querySelectorAll(s)].find((b) => b.textContent === t).click(), sel, text);
}

const problems = [];
// The refused save is answered 400, which Chromium logs.
let expectFailedRequest = false;
const browser = await launch();
await browser.defaultBrowserContext().overridePermissions(cfg.base, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
const page = await browser.newPage();
page.setDefaultTimeout(wait.timeout);
await page.setViewport({ width: 1280, height: 900 });
watch(page, problems, (text) => expectFailedRequest && /^Failed to load resource: the server responded with a status of 400/.test(text));
const form = 'form[aria-label="OAuth2"]';
let shots = 0;

// shot saves what the viewport shows, sel (the form, if not given)
// scrolled to its top, as cfg.shots/oauth2-NN-NAME.png and prints "shot PATH".
async function shot(name, sel = form) {
  await page.$eval(sel, (e) => e.scrollIntoView({ block: 'start' }));
  const file = path.join(cfg.shots, `oauth2-${String(++shots).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file });
  console.log('shot ' + file);
}

// status waits for the banner of the OAuth2 form to say text.
async function status(text) {
  await page.waitForFunction((f, t) => [...document.querySelectorAll(`${f} [role="status"]`)].some((s) => s.textContent === t), wait, form, text);
}

// pick opens the picker, searches query, checks that the choices are want
// (their names) and chooses name.
async function pick(query, want, name) {
  await clickText(page, `${form} button`, 'Add provider');
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'oa-new', wait);
  await page.type('#oa-new', query);
  await page.waitForFunction((w) => JSON.stringify([...document.querySelectorAll('#oa-choices button')].map((b) => b.dataset.name)) === JSON.stringify(w), wait, want);
  await page.click(`#oa-choices button[data-name="${name}"]`);
  await page.waitForFunction(() => document.getElementById('oa-picker').hidden, wait);
}

// apiUsers reads the users collection with the dashboard's own session.
function apiUsers() {
  return page.evaluate(async (base) => {
    const { token } = JSON.parse(localStorage.getItem('pocketbase_auth'));
    const res = await fetch(base + '/api/collections/users', { headers: { Authorization: token } });
    return res.json();
  }, cfg.base);
}

// noSideways checks that the page does not scroll sideways at its width.
async function noSideways(what) {
  const [sw, cw] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  console.log(`width ${what} ${sw}/${cw}`);
  assert(sw <= cw, `${what} scrolls sideways: scrollWidth ${sw} > ${cw}`);
}

await step('sign in and open the OAuth2 options of users', async () => {
  await page.goto(dash + '#/login', { waitUntil: 'load' });
  await page.waitForSelector('#f-identity');
  await page.type('#f-identity', cfg.email);
  await page.type('#f-password', cfg.password);
  await page.click('form button[type="submit"]');
  await page.waitForFunction(() => location.hash === '#/logs', wait);
  await openOAuth2(page, 'users');
  await shot('empty');
});

await step('the redirect URL is shown with a copy button', async () => {
  await page.waitForFunction((want) => document.getElementById('oa-redirect').textContent === want, wait, cfg.redirect);
  await page.click(`${form} button[aria-label="Copy the redirect URL"]`);
  await status('Copied.');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert(copied === cfg.redirect, `the clipboard holds ${JSON.stringify(copied)}, want ${cfg.redirect}`);
});

await step('the picker: Escape closes it and gives the focus back', async () => {
  await clickText(page, `${form} button`, 'Add provider');
  await page.waitForFunction(() => document.activeElement.id === 'oa-new', wait);
  const n = await page.$$eval('#oa-choices button', (bs) => bs.length);
  assert(n === 32, `the picker offers ${n} providers, want 32`);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => document.getElementById('oa-picker').hidden && document.activeElement.textContent === 'Add provider', wait);
});

await step('add GitHub from the picker and save it', async () => {
  await pick('git', ['gitea', 'gitee', 'github', 'gitlab'], 'github');
  await page.waitForFunction(() => document.activeElement.id === 'oa-0-clientId', wait);
  const ids = await page.$$eval('fieldset.oa-provider input, fieldset.oa-provider select', (is) => is.map((i) => i.id));
  assert(JSON.stringify(ids) === JSON.stringify(['oa-0-clientId', 'oa-0-clientSecret', 'oa-0-displayName', 'oa-0-pkce']), `GitHub's fields ${ids}`);
  await page.type('#oa-0-clientId', cfg.clientId);
  await page.type('#oa-0-clientSecret', cfg.clientSecret);
  await page.click('#oa-enabled');
  await shot('github', 'fieldset.oa-provider');
  await page.click(`${form} button[type="submit"]`);
  await status('The OAuth2 options were saved.');
  assert(await page.$eval('#oa-0-clientSecret', (i) => i.value) === '', 'the secret stays in the form');
  const users = await apiUsers();
  const ps = users.oauth2.providers;
  assert(users.oauth2.enabled && ps.length === 1 && ps[0].name === 'github' && ps[0].clientId === cfg.clientId && !('clientSecret' in ps[0]),
    `GET /api/collections/users: oauth2 ${JSON.stringify(users.oauth2)}`);
  await shot('saved');
});

await step('a value the server refuses shows its message', async () => {
  await pick('oidc', ['oidc', 'oidc2', 'oidc3'], 'oidc');
  const ids = await page.$$eval('fieldset.oa-provider:nth-of-type(2) input', (is) => is.map((i) => i.id));
  assert(ids.includes('oa-1-authURL') && ids.includes('oa-1-tokenURL'), `OIDC's fields ${ids}`);
  await page.type('#oa-1-clientId', 'oidc-client');
  await page.type('#oa-1-clientSecret', 'oidc-secret');
  await page.type('#oa-1-authURL', cfg.badURL);
  await page.type('#oa-1-tokenURL', 'https://id.example.com/token');
  expectFailedRequest = true;
  await page.click(`${form} button[type="submit"]`);
  await page.waitForFunction((m) => document.getElementById('err-oa-1-authURL').textContent === m, wait, cfg.badURLError);
  const alert = await page.$eval(`${form} > .notice [role="alert"]`, (a) => a.textContent);
  console.log('alert ' + JSON.stringify(alert));
  assert(alert.includes(`OIDC: Auth URL: ${cfg.badURLError}`), `the banner says ${alert}`);
  assert(await page.$eval('#oa-1-authURL', (i) => i.getAttribute('aria-invalid')) === 'true', 'the field is marked invalid');
  await shot('refused', 'fieldset.oa-provider:nth-of-type(2)');
  // Typing clears the banner; the provider is taken off and the rest saved.
  await page.type('#oa-1-displayName', 'x');
  assert(await page.$eval(`${form} > .notice`, (n) => n.textContent) === '', 'the banner stays after an input');
  await clickText(page, `${form} button`, 'Remove OIDC');
  await page.click(`${form} button[type="submit"]`);
  await status('The OAuth2 options were saved.');
  expectFailedRequest = false;
  const ps = (await apiUsers()).oauth2.providers;
  assert(ps.length === 1 && ps[0].name === 'github', `after the removal: ${JSON.stringify(ps)}`);
});

await step('both widths, no sideways scroll at 390 px', async () => {
  await clickText(page, `${form} button`, 'Add provider');
  await page.type('#oa-new', 'o');
  await shot('picker-1280', '#oa-picker');
  await noSideways('1280');
  await page.setViewport({ width: 390, height: 844 });
  await noSideways('390 with the picker');
  await shot('picker-390', '#oa-picker');
  await page.keyboard.press('Escape');
  await noSideways('390');
  await shot('form-390');
  await shot('provider-390', 'fieldset.oa-provider');
});

await step('no console error, page error or dialog', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
