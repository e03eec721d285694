// Drives the dashboard's Settings screens in headless Chromium.
// TestDashboardSettingsBrowser (dashboard_settings_browser_test.go) runs it:
//
//	node settings.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package and
// JOURNEY a JSON object: base, chromium, shots, email and password (as for
// journey.mjs), appName and appURL (to save), badURL (an invalid app URL),
// ruleLabel (a rate limit rule to add), proxyHeaders (comma separated),
// smtpHost, smtpPort, smtpUser and smtpPassword (the SMTP sink), and
// testTo (the test email's recipient).
// It prints "ok NAME" per step, "shot PATH" per screenshot,
// "field-error KEY TEXT" for the invalid URL's error, and "FAIL NAME:
// DETAIL" for the first step that fails, then stops.
import path from 'node:path';
import { assert, bothWidths, cfg, failed, launch, screenshot, step, watch } from './harness.mjs';


const wait = { timeout: 15000 };
const dash = cfg.base + '/_/';
const problems = [];
// The invalid URL's PATCH is answered 400, which Chromium logs.
let expectFailedRequest = false;

const browser = await launch();

const page = await browser.newPage();
page.setDefaultTimeout(wait.timeout);
await page.setViewport({ width: 1000, height: 800 });
watch(page, problems, (text) => expectFailedRequest && /^Failed to load resource: the server responded with a status of 400/.test(text));

const shot = (name) => screenshot(page, 'settings', name);

const byID = (id) => `[id="${id}"]`;

async function setValue(id, value) {
  await page.$eval(byID(id), (i) => { i.value = ''; });
  await page.type(byID(id), String(value));
}

async function setChecked(id, on) {
  if (await page.$eval(byID(id), (i) => i.checked) !== on) await page.click(byID(id));
}

// submit presses the submit button of the form holding the field id and
// waits for its status (returned) or alert, in the form's banner (its
// notice, which the press clears).
async function submit(id) {
  const form = await page.$(`form:has(${byID(id)})`);
  const button = await form.$('button[type="submit"]');
  await button.click();
  await form.waitForSelector('.notice [role="status"], .notice [role="alert"]');
  const status = await form.$eval('.notice', (m) => {
    const s = m.querySelector('[role="status"]');
    return s ? s.textContent : 'ALERT ' + m.textContent;
  });
  return status;
}

// open goes to the screen and waits until its settings are loaded.
async function open(hash, h1, loaded) {
  await page.goto(dash + hash, { waitUntil: 'load' });
  await page.waitForFunction((h1) => document.querySelector('h1') && document.querySelector('h1').textContent === h1, wait, h1);
  await page.waitForFunction(loaded, wait);
}

const appLoaded = () => document.querySelector('[id="f-meta.appName"]').value !== '' && document.querySelector('.rules').children.length > 0;
const mailLoaded = () => document.querySelector('[id="f-smtp.host"]').value !== '';

await step('sign in', async () => {
  await page.goto(dash + '#/login', { waitUntil: 'load' });
  await page.waitForSelector('#f-identity');
  await page.type('#f-identity', cfg.email);
  await page.type('#f-password', cfg.password);
  await page.click('form button[type="submit"]');
  await page.waitForFunction(() => location.hash === '#/logs', wait);
});

await step('settings screen', async () => {
  await page.click('nav[aria-label="Main"] a[href="#/settings"]');
  await page.waitForFunction(() => location.hash === '#/settings', wait);
  await page.waitForFunction(appLoaded, wait);
  await shot('settings');
});

await step('invalid URL shows its error next to the field', async () => {
  expectFailedRequest = true;
  await setValue('f-meta.appURL', cfg.badURL);
  const got = await submit('f-meta.appURL');
  expectFailedRequest = false;
  assert(got.startsWith('ALERT '), `status ${got}`);
  const err = await page.$eval(byID('err-meta.appURL'), (p) => p.textContent);
  assert(err, 'no error next to the app URL');
  const described = await page.$eval(byID('f-meta.appURL'), (i) => i.getAttribute('aria-describedby') + ' ' + i.getAttribute('aria-invalid'));
  assert(described === 'err-meta.appURL true', `input ${described}`);
  console.log(`field-error meta.appURL ${JSON.stringify(err)}`);
  await shot('invalid-url');
});

await step('app name and URL saved', async () => {
  await setValue('f-meta.appName', cfg.appName);
  await setValue('f-meta.appURL', cfg.appURL);
  const got = await submit('f-meta.appName');
  assert(got === 'Settings saved.', `status ${got}`);
  const err = await page.$eval(byID('err-meta.appURL'), (p) => p.textContent);
  assert(err === '', `error left: ${err}`);
});

await step('rate limit rule added', async () => {
  await setChecked('f-rateLimits.enabled', true);
  const before = await page.$$eval('fieldset.rule', (f) => f.length);
  await page.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent === 'Add rule').click());
  const n = await page.$$eval('fieldset.rule', (f) => f.length);
  assert(n === before + 1, `rules ${before} -> ${n}`);
  const k = `rateLimits.rules.${n - 1}`;
  await setValue(`f-${k}.label`, cfg.ruleLabel);
  await page.select(byID(`f-${k}.audience`), '@guest');
  await setValue(`f-${k}.maxRequests`, 7);
  await setValue(`f-${k}.duration`, 11);
  await shot('rate-limits');
  const got = await submit('f-meta.appName');
  assert(got === 'Settings saved.', `status ${got}`);
  const labels = await page.$$eval('fieldset.rule input[type="text"]', (is) => is.map((i) => i.value));
  assert(labels.includes(cfg.ruleLabel), `rules after save ${labels}`);
});

await step('trusted proxy saved', async () => {
  await setValue('f-trustedProxy.headers', cfg.proxyHeaders);
  await setChecked('f-trustedProxy.useLeftmostIP', true);
  const got = await submit('f-trustedProxy.headers');
  assert(got === 'Settings saved.', `status ${got}`);
  await open('#/settings', 'Settings', appLoaded);
  const v = await page.$eval(byID('f-trustedProxy.headers'), (i) => i.value);
  const name = await page.$eval(byID('f-meta.appName'), (i) => i.value);
  assert(name === cfg.appName, `app name after reload ${name}`);
  assert(v.replace(/\s/g, '') === cfg.proxyHeaders.replace(/\s/g, ''), `headers after reload ${v}`);
  await shot('settings-saved');
});

await step('test email with SMTP off: not sent, in the outbox', async () => {
  await page.goto(dash + '#/settings/mail', { waitUntil: 'load' });
  await page.waitForFunction(() => document.querySelector('h1') && document.querySelector('h1').textContent === 'Mail settings', wait);
  await page.waitForFunction(() => !document.querySelector('[id="f-smtp.enabled"]').checked, wait);
  await setValue('f-email', cfg.testTo);
  const got = await submit('f-email');
  assert(/^Not sent: SMTP is off, so the test email was written to the outbox, mail\/[^ /]+ in the data dir\./.test(got), `status ${got}`);
  console.log('outbox-message ' + JSON.stringify(got));
  await shot('mail-test-outbox');
  // The banner speaks of the last action: a change to the form clears it.
  await page.type(byID('f-email'), 'x');
  const left = await page.$eval('form:has([id="f-email"]) .notice', (m) => m.textContent);
  assert(left === '', `after a change the banner still says ${JSON.stringify(left)}`);
  await setValue('f-email', cfg.testTo);
});

await step('mail settings saved', async () => {
  await open('#/settings/mail', 'Mail settings', mailLoaded);
  await shot('mail');
  await setValue('f-meta.senderAddress', 'sender@example.com');
  await setChecked('f-smtp.enabled', true);
  await setValue('f-smtp.host', cfg.smtpHost);
  await setValue('f-smtp.port', cfg.smtpPort);
  await setValue('f-smtp.username', cfg.smtpUser);
  await setValue('f-smtp.password', cfg.smtpPassword);
  await page.select(byID('f-smtp.authMethod'), 'PLAIN');
  const got = await submit('f-smtp.host');
  assert(got === 'Settings saved.', `status ${got}`);
  const pw = await page.$eval(byID('f-smtp.password'), (i) => i.value);
  assert(pw === '', 'the password field still holds the password after saving');
});

await step('the SMTP password is never shown back', async () => {
  await open('#/settings/mail', 'Mail settings', mailLoaded);
  const v = await page.evaluate(() => ({
    pw: document.querySelector('[id="f-smtp.password"]').value,
    host: document.querySelector('[id="f-smtp.host"]').value,
    all: [...document.querySelectorAll('input')].map((i) => i.value).join('\n') + document.documentElement.outerHTML,
  }));
  assert(v.host === cfg.smtpHost, `host after reload ${v.host}`);
  assert(v.pw === '' && !v.all.includes(cfg.smtpPassword), 'the page shows the SMTP password');
});

await step('send test email', async () => {
  await setValue('f-email', cfg.testTo);
  await page.select('#f-template', 'password-reset');
  const got = await submit('f-email');
  assert(got === 'The test email was sent: the SMTP server accepted it.', `status ${got}`);
  await shot('mail-test-sent');
});

await step('both widths, no sideways scroll', async () => {
  await bothWidths(page, 'settings', 'mail');
  await open('#/settings', 'Settings', appLoaded);
  await bothWidths(page, 'settings', 'app');
});

await step('no console error', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
