// Drives the dashboard's Collections screen in headless Chromium.
// TestDashboardCollectionsBrowser (dashboard_collections_browser_test.go)
// runs it:
//
//	node collections.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package and
// JOURNEY a JSON object: base, chromium, shots, email and password (the
// superuser, as for journey.mjs), newEmail and userPassword (a record the
// script creates, edits and deletes in users), impEmail (a user of users
// the script impersonates; its one linked OAuth2 account, oidc ext-1,
// is unlinked), listRule (a rule it saves for users),
// clientId, authURL and tokenURL (of an OAuth2 provider it adds to users,
// PKCE off, the user info URL left to the preset), newCollection and
// renamed (an auth collection it creates, renames and
// deletes).
// It prints "ok NAME" per step, "shot PATH" per screenshot, "token T" for
// the impersonation token it read, and "FAIL NAME: DETAIL" for the first
// step that fails, then stops.
import path from 'node:path';
import { assert, cfg, failed, launch, screenshot, step, watch } from './harness.mjs';


const wait = { timeout: 15000 };
const dash = cfg.base + '/_/';
const problems = [];
// The field error step's create is answered 400, which Chromium logs.
let expectFailedRequest = false;

const browser = await launch();

const page = await browser.newPage();
page.setDefaultTimeout(wait.timeout);
await page.setViewport({ width: 1100, height: 800 });
watch(page, problems, (text) => expectFailedRequest && /^Failed to load resource: the server responded with a status of 400/.test(text));

const shot = (name) => screenshot(page, 'collections', name);

// clickText clicks the first element matching sel whose text is text.
async function clickText(sel, text) {
  await page.waitForFunction((s, t) => [...document.querySelectorAll(s)].some((b) => b.textContent === t && !b.disabled), wait, sel, text);
  await page.evaluate((s, t) => [...document.querySelectorAll(s)].find((b) => b.textContent === t).click(), sel, text);
}

async function typeIn(sel, text) {
  await page.$eval(sel, (i) => { i.value = ''; });
  await page.type(sel, text);
}

// rows returns the emails of the listed records.
async function rows() {
  return page.$$eval('.coll-table tbody tr', (trs) => trs.map((tr) => tr.children[1].textContent));
}

async function status(text) {
  await page.waitForFunction((t) => [...document.querySelectorAll('[role="status"]')].some((s) => s.textContent === t), wait, text);
}

// filterTo searches with filter and waits until the list is the emails.
async function filterTo(filter, emails) {
  await typeIn('#rec-filter', filter);
  await page.click('.coll-search button[type="submit"]');
  await page.waitForFunction((want) => {
    const got = [...document.querySelectorAll('.coll-table tbody tr')].map((tr) => tr.children[1].textContent);
    return JSON.stringify(got) === JSON.stringify(want);
  }, wait, emails);
}

async function editRow(email) {
  await clickText('.coll-table button', 'Edit');
  await page.waitForFunction((e) => document.querySelector('#rec-email') && document.querySelector('#rec-email').value === e, wait, email);
}

await step('sign in and open users', async () => {
  await page.goto(dash + '#/login', { waitUntil: 'load' });
  await page.waitForSelector('#f-identity');
  await page.type('#f-identity', cfg.email);
  await page.type('#f-password', cfg.password);
  await page.click('form button[type="submit"]');
  await page.waitForFunction(() => location.hash === '#/logs', wait);
  await page.goto(dash + '#/collections');
  await page.waitForFunction(() => document.querySelector('h1').textContent === 'Collections', wait);
  await clickText('.coll-pick button', 'users');
  await page.waitForFunction(() => document.querySelectorAll('.coll-table tbody tr').length > 0, wait);
  await shot('users');
});

await step('a field error shows next to its field', async () => {
  await clickText('button', 'New record');
  await page.waitForSelector('#rec-email');
  expectFailedRequest = true;
  await page.type('#rec-email', cfg.newEmail);
  await page.type('#rec-password', cfg.userPassword);
  await page.type('#rec-passwordConfirm', 'something-else');
  await page.click('form[aria-label="New record"] button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#err-rec-passwordConfirm').textContent !== '', wait);
  console.log('field-error ' + JSON.stringify(await page.$eval('#err-rec-passwordConfirm', (e) => e.textContent)));
  assert(await page.$eval('#rec-email', (i) => i.getAttribute('aria-describedby')) === 'err-rec-email', 'aria-describedby');
  await shot('field-error');
});

await step('create a record and see it listed', async () => {
  await typeIn('#rec-passwordConfirm', cfg.userPassword);
  await page.click('form[aria-label="New record"] button[type="submit"]');
  await status('The record was created.');
  expectFailedRequest = false;
  await page.waitForFunction((e) => [...document.querySelectorAll('.coll-table tbody tr')].some((tr) => tr.children[1].textContent === e), wait, cfg.newEmail);
});

await step('filter to it', async () => {
  await filterTo(`email="${cfg.newEmail}"`, [cfg.newEmail]);
  await shot('filtered');
});

await step('edit it', async () => {
  await editRow(cfg.newEmail);
  await page.click('#rec-verified');
  await page.click('form[aria-label="Edit record"] button[type="submit"]');
  await status('The record was saved.');
  await page.waitForFunction(() => {
    const tr = document.querySelector('.coll-table tbody tr');
    return tr && tr.children[2].textContent === 'yes';
  }, wait);
});

await step('impersonate and read the token', async () => {
  await filterTo(`email="${cfg.impEmail}"`, [cfg.impEmail]);
  await editRow(cfg.impEmail);
  await typeIn('#imp-duration', '600');
  await page.click('form[aria-label="Impersonate"] button[type="submit"]');
  await page.waitForSelector('#imp-token');
  const tok = await page.$eval('#imp-token', (i) => i.value);
  assert(tok.split('.').length === 3, `token ${tok}`);
  console.log('token ' + tok);
  await shot('impersonate');
});

await step('unlink an OAuth2 account', async () => {
  await page.waitForFunction(() => /oidc: ext-1/.test(document.querySelector('section[aria-label="Linked OAuth2 accounts"]').textContent), wait);
  await clickText('section[aria-label="Linked OAuth2 accounts"] button', 'Unlink oidc');
  await status('The account was unlinked.');
  await page.waitForFunction(() => /No linked OAuth2 account\./.test(document.querySelector('section[aria-label="Linked OAuth2 accounts"]').textContent), wait);
});

await step('delete it', async () => {
  await filterTo(`email="${cfg.newEmail}"`, [cfg.newEmail]);
  await editRow(cfg.newEmail);
  await clickText('button', 'Delete record');
  await clickText('button', 'Confirm delete');
  await status('The record was deleted.');
  await page.waitForFunction(() => document.querySelectorAll('.coll-table tbody tr').length === 0, wait);
  await shot('deleted');
});

await step('save an API rule and an option of users', async () => {
  await clickText('.coll-actions button', 'Options');
  await page.waitForSelector('#opt-listRule');
  await page.$eval('#opt-listRule-locked', (i) => { i.checked = false; });
  await typeIn('#opt-listRule', cfg.listRule);
  await typeIn('#opt-passwordResetToken-duration', '0');
  expectFailedRequest = true;
  await page.click('form[aria-label="Collection options"] button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#err-opt-passwordResetToken-duration').textContent !== '', wait);
  console.log('option-error ' + JSON.stringify(await page.$eval('#err-opt-passwordResetToken-duration', (e) => e.textContent)));
  await typeIn('#opt-passwordResetToken-duration', '1800');
  await typeIn('#opt-otp-duration', '240');
  await page.click('form[aria-label="Collection options"] button[type="submit"]');
  await status('The options were saved.');
  expectFailedRequest = false;
  await shot('options');
});

await step('add an OAuth2 provider to users', async () => {
  await clickText('form[aria-label="OAuth2"] button', 'Add provider');
  await page.type('#oa-new', 'oidc');
  await page.click('#oa-choices button[data-name="oidc"]');
  await page.waitForSelector('#oa-0-clientId');
  await page.type('#oa-0-clientId', cfg.clientId);
  await page.type('#oa-0-clientSecret', 'a-client-secret-of-the-test');
  await page.type('#oa-0-displayName', 'OIDC (test)');
  await page.type('#oa-0-authURL', cfg.authURL);
  await page.type('#oa-0-tokenURL', cfg.tokenURL);
  assert(await page.$eval('#oa-0-pkce', (s) => s.value) === '', 'a new provider starts with the preset PKCE');
  await page.select('#oa-0-pkce', 'off');
  await typeIn('#oa-map-name', 'name');
  await page.click('#oa-enabled');
  await page.click('form[aria-label="OAuth2"] button[type="submit"]');
  await status('The OAuth2 options were saved.');
  assert(await page.$eval('#oa-0-clientSecret', (i) => i.value) === '', 'the secret stays in the form');
  await shot('oauth2');
});

await step('the provider reads back its URLs and PKCE', async () => {
  await page.reload({ waitUntil: 'load' });
  await clickText('.coll-pick button', 'users');
  await clickText('.coll-actions button', 'Options');
  await page.waitForSelector('#oa-0-authURL');
  const got = await page.$eval('form[aria-label="OAuth2"]', () => ['authURL', 'tokenURL', 'userInfoURL', 'pkce'].map((k) => document.querySelector(`#oa-0-${k}`).value));
  assert(JSON.stringify(got) === JSON.stringify([cfg.authURL, cfg.tokenURL, '', 'off']), `read back ${JSON.stringify(got)}`);
});

await step('create, rename and delete a collection', async () => {
  await typeIn('#new-coll-name', cfg.newCollection);
  await page.click('form[aria-label="New auth collection"] button[type="submit"]');
  await page.waitForFunction((n) => [...document.querySelectorAll('.coll-pick button')].some((b) => b.textContent === n && b.getAttribute('aria-pressed') === 'true'), wait, cfg.newCollection);
  await clickText('.coll-actions button', 'Options');
  await typeIn('#opt-name', cfg.renamed);
  await page.click('form[aria-label="Collection options"] button[type="submit"]');
  await page.waitForFunction((n) => [...document.querySelectorAll('.coll-pick button')].some((b) => b.textContent === n), wait, cfg.renamed);
  await clickText('.coll-actions button', 'Options');
  await typeIn('#del-coll-name', cfg.renamed);
  await page.click('form[aria-label="Delete collection"] button[type="submit"]');
  await page.waitForFunction((n) => ![...document.querySelectorAll('.coll-pick button')].some((b) => b.textContent === n) && document.querySelectorAll('.coll-pick button').length > 0, wait, cfg.renamed);
  await shot('collection-deleted');
});

await step('no console error, page error or dialog', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
