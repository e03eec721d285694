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
// is unlinked), bulkPrefix (the users whose email starts with it are
// deleted together), field (a text field it adds to users), listRule (a
// rule it saves for users), clientId, authURL and tokenURL (of an OAuth2
// provider it adds to users, PKCE off, the user info URL left to the
// preset), newCollection and renamed (an auth collection it creates,
// renames and deletes).
// Each screen is shot at 1280x900 and 390x844, and at 390 px no screen
// may scroll sideways. It prints "ok NAME" per step, "shot PATH" per
// screenshot, "token T" for the impersonation token it read, "field-error
// …", "option-error …" and "rule-error …" for the messages shown beside
// a field, and "FAIL NAME: DETAIL" for the first step that fails, then
// stops.
import { assert, cfg, failed, launch, screenshot, step, watch } from './harness.mjs';

const wait = { timeout: 15000 };
const dash = cfg.base + '/_/';
const problems = [];
// The steps that make the server refuse something (400), which Chromium logs.
let expectFailedRequest = false;

const browser = await launch();
const page = await browser.newPage();
page.setDefaultTimeout(wait.timeout);
const wide = { width: 1280, height: 900 };
await page.setViewport(wide);
watch(page, problems, (text) => expectFailedRequest && /^Failed to load resource: the server responded with a status of 400/.test(text));

// shots takes the screen at both widths, and checks that at 390 px it
// does not scroll sideways.
async function shots(name) {
  await screenshot(page, 'collections', `${name}-1280`);
  await page.setViewport({ width: 390, height: 844 });
  await new Promise((r) => setTimeout(r, 100));
  const [sw, iw] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  await screenshot(page, 'collections', `${name}-390`);
  await page.setViewport(wide);
  assert(sw <= iw, `${name} scrolls sideways at 390 px: scrollWidth ${sw} > ${iw}`);
}

// clickText clicks the first element matching sel whose text is text.
async function clickText(sel, text) {
  await page.waitForFunction((s, t) => [...document.querySelectorAll(s)].some((b) => b.textContent === t && !b.disabled && b.offsetParent !== null), wait, sel, text);
  await page.evaluate((s, t) => [...document.querySelectorAll(s)].find((b) => b.textContent === t && !b.disabled && b.offsetParent !== null).click(), sel, text);
}

async function typeIn(sel, text) {
  await page.$eval(sel, (i) => { i.value = ''; });
  await page.type(sel, text);
}

// emails returns the emails of the listed records, in order.
const emails = () => page.$$eval('.coll-table tbody tr td[data-key="email"]', (tds) => tds.map((td) => td.textContent));

async function status(text) {
  await page.waitForFunction((t) => [...document.querySelectorAll('[role="status"]')].some((s) => s.textContent === t), wait, text);
}

// filterTo searches with filter and waits until the list is want.
async function filterTo(filter, want) {
  await typeIn('#rec-filter', filter);
  await page.click('.coll-search button[type="submit"]');
  await page.waitForFunction((w) => JSON.stringify([...document.querySelectorAll('.coll-table tbody td[data-key="email"]')].map((td) => td.textContent)) === JSON.stringify(w), wait, want);
}

// openRecord opens the side panel of the listed record email.
async function openRecord(email) {
  await clickText('.coll-table td[data-key="email"] button', email);
  await page.waitForFunction((e) => document.querySelector('dialog.drawer[open] #rec-email')?.value === e, wait, email);
}

const drawerOpen = () => page.evaluate(() => !!document.querySelector('dialog.drawer[open]'));

async function openSettings(tab) {
  await page.click('#coll-settings');
  await page.waitForSelector('dialog.drawer[open] [role="tablist"]');
  await page.$eval(`#tab-${tab}`, (b) => b.click());
  await page.waitForFunction((t) => document.querySelector(`#tab-${t}`).getAttribute('aria-selected') === 'true', wait, tab);
}

async function closeDrawer() {
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('dialog.drawer'), wait);
}

await step('sign in and open users (chosen first, the hash follows)', async () => {
  await page.goto(dash + '#/login', { waitUntil: 'load' });
  await page.waitForSelector('#f-identity');
  await page.type('#f-identity', cfg.email);
  await page.type('#f-password', cfg.password);
  await page.click('form button[type="submit"]');
  await page.waitForFunction(() => location.hash === '#/logs', wait);
  await page.goto(dash + '#/collections');
  await page.waitForFunction(() => document.querySelector('h1').textContent === 'Collections', wait);
  await page.waitForFunction(() => document.querySelector('.coll-pick button[aria-current="true"]')?.textContent === 'users', wait);
  await page.waitForFunction(() => location.hash === '#/collections?collection=users', wait);
  await page.waitForFunction(() => document.querySelectorAll('.coll-table tbody td[data-key="email"]').length > 0, wait);
  await shots('users');
});

await step('the sidebar search narrows the collections', async () => {
  await page.type('#coll-search', 'super');
  const names = () => page.$$eval('.coll-pick button', (bs) => bs.map((b) => b.textContent));
  await page.waitForFunction(() => [...document.querySelectorAll('.coll-pick button')].every((b) => b.textContent === '_superusers'), wait);
  await clickText('.coll-pick button', '_superusers');
  await page.waitForFunction(() => location.hash === '#/collections?collection=_superusers' && document.querySelector('#coll-title').textContent === '_superusers', wait);
  await shots('search');
  await typeIn('#coll-search', 'us');
  await page.$eval('#coll-search', (i) => { i.value = ''; i.dispatchEvent(new Event('input')); });
  assert((await names()).includes('users'), 'clearing the search lists users again');
  await clickText('.coll-pick button', 'users');
  await page.waitForFunction(() => document.querySelector('#coll-title').textContent === 'users', wait);
});

await step('a field error shows next to its field', async () => {
  await clickText('button', 'New record');
  await page.waitForSelector('dialog.drawer[open] #rec-email');
  expectFailedRequest = true;
  await page.type('#rec-email', cfg.newEmail);
  await page.type('#rec-password', cfg.userPassword);
  await page.type('#rec-passwordConfirm', 'something-else');
  await page.click('form[aria-label="New record"] button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#err-rec-passwordConfirm').textContent !== '', wait);
  console.log('field-error ' + JSON.stringify(await page.$eval('#err-rec-passwordConfirm', (e) => e.textContent)));
  assert(await page.$eval('#rec-email', (i) => i.getAttribute('aria-describedby')) === 'err-rec-email', 'aria-describedby');
  await shots('record-new');
});

await step('create a record and see it listed', async () => {
  await typeIn('#rec-passwordConfirm', cfg.userPassword);
  await page.click('form[aria-label="New record"] button[type="submit"]');
  await status('The record was created.');
  expectFailedRequest = false;
  assert(!(await drawerOpen()), 'the panel closes after the create');
  await page.waitForFunction((e) => [...document.querySelectorAll('.coll-table td[data-key="email"]')].some((td) => td.textContent === e), wait, cfg.newEmail);
});

await step('sort by a column, both ways', async () => {
  await filterTo(`email~"${cfg.bulkPrefix}"`, [`${cfg.bulkPrefix}3@example.com`, `${cfg.bulkPrefix}2@example.com`, `${cfg.bulkPrefix}1@example.com`]);
  await clickText('.coll-table th button.sort', 'Email');
  await page.waitForFunction(() => document.querySelector('th[aria-sort]')?.getAttribute('aria-sort') === 'ascending', wait);
  await page.waitForFunction((p) => [...document.querySelectorAll('.coll-table td[data-key="email"]')].map((td) => td.textContent).join() === [1, 2, 3].map((i) => `${p}${i}@example.com`).join(), wait, cfg.bulkPrefix);
  await page.click('th[aria-sort] button.sort');
  await page.waitForFunction(() => document.querySelector('th[aria-sort]')?.getAttribute('aria-sort') === 'descending', wait);
  await page.waitForFunction((p) => [...document.querySelectorAll('.coll-table td[data-key="email"]')].map((td) => td.textContent).join() === [3, 2, 1].map((i) => `${p}${i}@example.com`).join(), wait, cfg.bulkPrefix);
  await shots('sorted');
});

await step('select and delete several records', async () => {
  await page.click('#rec-all');
  await clickText('.bulk button', 'Delete selected (3)');
  await clickText('.bulk button', 'Delete them');
  await status('3 record(s) deleted.');
  await page.waitForFunction(() => document.querySelector('.coll-table td.empty')?.textContent === 'No record matches the filter.', wait);
});

await step('filter to a record, edit it in its panel', async () => {
  await filterTo(`email="${cfg.newEmail}"`, [cfg.newEmail]);
  await openRecord(cfg.newEmail);
  await shots('record');
  await page.click('#rec-verified');
  await page.click('form[aria-label="Edit record"] button[type="submit"]');
  await status('The record was saved.');
  await page.waitForFunction(() => document.querySelector('.coll-table td[data-key="verified"]')?.textContent === 'yes', wait);
});

await step('Escape closes the record panel and the focus returns', async () => {
  await openRecord(cfg.newEmail);
  await closeDrawer();
  const back = await page.evaluate(() => document.activeElement && document.activeElement.closest('td[data-key="email"]') !== null);
  assert(back, 'the focus is back on the record\'s button');
});

await step('impersonate and read the token', async () => {
  await filterTo(`email="${cfg.impEmail}"`, [cfg.impEmail]);
  await openRecord(cfg.impEmail);
  await typeIn('#imp-duration', '600');
  await page.click('form[aria-label="Impersonate"] button[type="submit"]');
  await page.waitForSelector('#imp-token');
  const tok = await page.$eval('#imp-token', (i) => i.value);
  assert(tok.split('.').length === 3, `token ${tok}`);
  console.log('token ' + tok);
});

await step('unlink an OAuth2 account', async () => {
  await page.waitForFunction(() => /oidc: ext-1/.test(document.querySelector('section[aria-label="Linked OAuth2 accounts"]').textContent), wait);
  await clickText('section[aria-label="Linked OAuth2 accounts"] button', 'Unlink oidc');
  await status('The account was unlinked.');
  await page.waitForFunction(() => /No linked OAuth2 account\./.test(document.querySelector('section[aria-label="Linked OAuth2 accounts"]').textContent), wait);
  await closeDrawer();
});

await step('delete a record from its panel', async () => {
  await filterTo(`email="${cfg.newEmail}"`, [cfg.newEmail]);
  await openRecord(cfg.newEmail);
  await clickText('dialog button', 'Delete record');
  await clickText('dialog button', 'Confirm delete');
  await status('The record was deleted.');
  await page.waitForFunction(() => document.querySelector('.coll-table td.empty') !== null, wait);
});

// users reads GET /api/collections/users with the page's session.
const users = () => page.evaluate(async () => {
  const res = await fetch('/api/collections/users', { headers: { Authorization: JSON.parse(localStorage.getItem('pocketbase_auth')).token } });
  return res.json();
});

await step('add a field, refused then saved, and see it in the API', async () => {
  await openSettings('fields');
  const selectedStyle = await page.$eval('#tab-fields', (b) => getComputedStyle(b).outlineStyle);
  assert(selectedStyle === 'none', `the tab chosen with the mouse is drawn with an outline (${selectedStyle}), like keyboard focus`);
  const n = await page.$$eval('.flds > li', (lis) => lis.length);
  assert(await page.$$eval('.fld-builtin', (lis) => lis.length) >= 8, 'the built-in fields are listed');
  assert(await page.$$eval('.fld-builtin button, .fld-builtin input', (els) => els.length) === 0, 'the built-in fields cannot be edited');
  assert(JSON.stringify(await page.$$eval('#fld-new-type option', (os) => os.map((o) => o.value))) === '["text","number","bool","email","url"]', 'only the stored types');
  await page.select('#fld-new-type', 'text');
  await clickText('form[aria-label="Fields"] button', 'Add field');
  await page.waitForSelector(`#fld-${n}-name`);
  await typeIn(`#fld-${n}-name`, 'email2 bad');
  expectFailedRequest = true;
  await page.click('form[aria-label="Fields"] button[type="submit"]');
  await page.waitForFunction((i) => document.querySelector(`#err-fld-${i}`).textContent !== '', wait, n);
  console.log('field-row-error ' + JSON.stringify(await page.$eval(`#err-fld-${n}`, (e) => e.textContent)));
  expectFailedRequest = false;
  await typeIn(`#fld-${n}-name`, cfg.field);
  await page.click(`#fld-${n}-required`);
  await typeIn(`#fld-${n}-max`, '40');
  await page.click('form[aria-label="Fields"] button[type="submit"]');
  await status('The fields were saved.');
  const f = (await users()).fields.find((x) => x.name === cfg.field);
  assert(f && f.type === 'text' && f.required === true && f.max === 40, `the API has ${JSON.stringify(f)}`);
  await shots('fields');
});

await step('move the new field up', async () => {
  const before = (await users()).fields.map((x) => x.name);
  const i = before.indexOf(cfg.field);
  await page.click(`#fld-${i} button[aria-label="Move up ${cfg.field}"]`);
  await page.waitForFunction((k, name) => document.querySelector(`#fld-${k}-name`)?.value === name, wait, i - 1, cfg.field);
  await page.click('form[aria-label="Fields"] button[type="submit"]');
  await status('The fields were saved.');
  const after = (await users()).fields.map((x) => x.name);
  assert(after.indexOf(cfg.field) === i - 1, `order after the move: ${after}`);
});

await step('a rule the server refuses shows its message beside it', async () => {
  await page.$eval('#tab-rules', (b) => b.click());
  await page.waitForSelector('#rule-viewRule');
  await clickText('form[aria-label="API rules"] button', 'Show available fields');
  const listed = await page.$eval('.rule-fields', (d) => d.textContent);
  for (const want of ['@request.auth.email', '@request.body.email', '@collection.users.', cfg.field]) assert(listed.includes(want), `available fields lack ${want}`);
  const viewRule = await page.$eval('#rule-viewRule', (t) => t.value);
  await typeIn('#rule-viewRule', '@collection.users.id = id');
  expectFailedRequest = true;
  await page.click('form[aria-label="API rules"] button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#err-rule-viewRule').textContent !== '', wait);
  const msg = await page.$eval('#err-rule-viewRule', (e) => e.textContent);
  console.log('rule-error ' + JSON.stringify(msg));
  assert(/join/.test(msg), `the message beside viewRule: ${msg}`);
  expectFailedRequest = false;
  await shots('rules-refused');
  await typeIn('#rule-viewRule', viewRule);
});

await step('a rule with text: locking asks, unlocking keeps the text, saved as shown', async () => {
  await typeIn('#rule-listRule', '');
  await page.type('#rule-listRule', cfg.listRule.slice(0, -12));
  await page.type('#rule-listRule', '@request.au');
  await page.waitForFunction(() => [...document.querySelectorAll('.rule-complete li')].some((li) => li.textContent === '@request.auth.id'), wait);
  await page.$eval('#rule-listRule', (t) => { t.value = ''; });
  await page.type('#rule-listRule', cfg.listRule);
  assert(await page.$eval('#rule-listRule-state', (p) => p.dataset.state) === 'filter', 'the state reads filter');
  await page.click('#rule-listRule-toggle');
  await page.waitForFunction(() => !document.querySelector('#rule-listRule ~ .rule-ask').hidden, wait);
  await clickText('form[aria-label="API rules"] button', 'Keep the filter');
  assert(await page.$eval('#rule-listRule', (t) => t.value) === cfg.listRule, 'Keep the filter keeps it');
  await page.click('#rule-listRule-toggle');
  await clickText('form[aria-label="API rules"] button', 'Lock it');
  await page.waitForFunction(() => document.querySelector('#rule-listRule-state').dataset.state === 'locked', wait);
  await page.click('#rule-listRule-toggle');
  await page.waitForFunction(() => document.querySelector('#rule-listRule-state').dataset.state === 'filter', wait);
  assert(await page.$eval('#rule-listRule', (t) => t.value) === cfg.listRule, 'unlocking brings the text back');
  await page.click('form[aria-label="API rules"] button[type="submit"]');
  await status('The API rules were saved.');
  assert((await users()).listRule === cfg.listRule, 'the API has the rule');
  await shots('rules');
});

await step('save options of users (an error beside its field first)', async () => {
  await page.$eval('#tab-options', (b) => b.click());
  await page.waitForSelector('#opt-otp-duration');
  await page.$eval('details.opt-mail', (d) => { d.open = true; });
  await shots('options');
  await typeIn('#opt-passwordResetToken-duration', '0');
  expectFailedRequest = true;
  await page.click('form[aria-label="Token durations"] button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('#err-opt-passwordResetToken-duration').textContent !== '', wait);
  console.log('option-error ' + JSON.stringify(await page.$eval('#err-opt-passwordResetToken-duration', (e) => e.textContent)));
  expectFailedRequest = false;
  await typeIn('#opt-passwordResetToken-duration', '1800');
  assert(await page.$$eval('form[aria-label="Token durations"] [role="alert"]', (a) => a.length) === 0, 'typing clears the error banner');
  await page.click('form[aria-label="Token durations"] button[type="submit"]');
  await status('Token durations: saved.');
  await typeIn('#opt-otp-duration', '240');
  await page.click('form[aria-label="One-time password (OTP)"] button[type="submit"]');
  await status('One-time password (OTP): saved.');
});

// This step drives colloauth.js's oauth2Form (its provider form as it is
// on this branch); it is the one to adapt when that form changes.
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
});

await step('Escape closes the settings and the focus returns to Settings', async () => {
  await closeDrawer();
  assert(await page.evaluate(() => document.activeElement && document.activeElement.id === 'coll-settings'), 'the focus is back on Settings');
});

await step('a reload keeps the collection; the provider reads back its URLs and PKCE', async () => {
  await clickText('.coll-pick button', '_superusers');
  await page.waitForFunction(() => location.hash === '#/collections?collection=_superusers', wait);
  await page.goto(dash + '#/collections?collection=users', { waitUntil: 'load' });
  await page.reload({ waitUntil: 'load' });
  await page.waitForFunction(() => document.querySelector('.coll-pick button[aria-current="true"]')?.textContent === 'users', wait);
  await openSettings('options');
  await page.waitForSelector('#oa-0-authURL');
  const got = await page.evaluate(() => ['authURL', 'tokenURL', 'userInfoURL', 'pkce'].map((k) => document.querySelector(`#oa-0-${k}`).value));
  assert(JSON.stringify(got) === JSON.stringify([cfg.authURL, cfg.tokenURL, '', 'off']), `read back ${JSON.stringify(got)}`);
  await closeDrawer();
});

await step('create, rename and delete a collection', async () => {
  await typeIn('#new-coll-name', cfg.newCollection);
  await page.click('form[aria-label="New auth collection"] button[type="submit"]');
  await status(`The collection ${cfg.newCollection} was created.`);
  assert(await page.$eval('#new-coll-name', (i) => i.value) === '', 'the name field is cleared');
  await page.waitForFunction((n) => document.querySelector('.coll-pick button[aria-current="true"]')?.textContent === n && location.hash === `#/collections?collection=${n}`, wait, cfg.newCollection);
  await shots('collection-created');
  await openSettings('fields');
  await typeIn('#opt-name', cfg.renamed);
  await page.click('form[aria-label="Rename collection"] button[type="submit"]');
  await status(`Renamed to ${cfg.renamed}.`);
  await page.waitForFunction((n) => [...document.querySelectorAll('.coll-pick button')].some((b) => b.textContent === n) && location.hash === `#/collections?collection=${n}`, wait, cfg.renamed);
  await page.$eval('#tab-options', (b) => b.click());
  await typeIn('#del-coll-name', cfg.renamed);
  await page.click('form[aria-label="Delete collection"] button[type="submit"]');
  await page.waitForFunction((n) => !document.querySelector('dialog.drawer') && ![...document.querySelectorAll('.coll-pick button')].some((b) => b.textContent === n) && document.querySelectorAll('.coll-pick button').length > 0, wait, cfg.renamed);
});

await step('no console error, page error or dialog', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
