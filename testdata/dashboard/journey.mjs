// Walks through the dashboard's first slice in headless Chromium, as a
// superuser and as a user who follows the links of their account mails.
// TestDashboardBrowser (dashboard_browser_test.go) runs it against a
// strongbox whose mails it has read:
//
//	node journey.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package
// and JOURNEY a JSON object: base (the server's URL), chromium (the
// browser's executable), shots (a dir for the screenshots), email and
// password (the superuser), resetLink, newPassword, verifyLink,
// emailChangeLink and userPassword (the password of the email change's
// user). Every screen is found by what the DOM contract names: headings,
// label texts, button texts, roles. It prints "ok NAME" per step, "shot
// PATH" per screenshot, "alert NAME TEXT" (JSON) for the error a step saw,
// and "FAIL NAME: DETAIL" for the first step that fails, then stops.
import { assert, bothWidths, cfg, failed, launch, step } from './harness.mjs';


const wait = { timeout: 15000 };
// The console errors and page errors of the whole journey; an expected
// error answer (a used token) may log its failed request, nothing else.
const problems = [];
let expectFailedRequest = false;

const browser = await launch();

// open loads url in a new tab that reports its console errors, page
// errors and API requests.
async function open(url) {
  const page = await browser.newPage();
  page.setDefaultTimeout(wait.timeout);
  await page.setViewport({ width: 1024, height: 720 });
  page.apiRequests = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const t = m.text();
    if (expectFailedRequest && /^Failed to load resource: the server responded with a status of 4\d\d/.test(t)) return;
    problems.push(`console error on ${page.url()}: ${t}`);
  });
  page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e && e.message || e}`));
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/')) page.apiRequests.push(`${r.method()} ${r.url()}`);
  });
  const res = await page.goto(url, { waitUntil: 'load' });
  // 304: a second tab revalidates the page the first one cached.
  assert(res === null || res.status() === 200 || res.status() === 304, `GET ${url} answered ${res && res.status()}`);
  return page;
}

// shot takes the page at 1280x900 and 390x844, failing when it scrolls
// sideways at 390 px (see bothWidths).
async function shot(page, name) {
  await bothWidths(page, 'journey', name);
}

async function heading(page, text) {
  await page.waitForFunction((text) => {
    const hs = document.querySelectorAll('h1');
    return hs.length === 1 && hs[0].textContent.trim() === text;
  }, wait, text).catch(async () => {
    const got = await page.$$eval('h1', (hs) => hs.map((h) => h.textContent.trim()));
    throw new Error(`want one h1 ${JSON.stringify(text)} on ${page.url()}, got ${JSON.stringify(got)}`);
  });
}

// fill types value into the control of the label whose text is label.
async function fill(page, label, value) {
  const input = await page.waitForFunction((label) => {
    const l = [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === label);
    return l && l.control;
  }, wait, label).catch(() => { throw new Error(`no field labelled ${JSON.stringify(label)} on ${page.url()}`); });
  await input.asElement().type(value);
}

async function submit(page, text) {
  const button = await page.waitForFunction((text) => [...document.querySelectorAll('form button[type="submit"]')]
    .find((b) => b.textContent.trim() === text && !b.disabled), wait, text)
    .catch(() => { throw new Error(`no enabled submit button ${JSON.stringify(text)} on ${page.url()}`); });
  await button.asElement().click();
}

// role waits for an element of role status or alert whose text contains
// text ('' for any), and returns its text.
async function role(page, name, text) {
  return page.waitForFunction((name, text) => {
    const el = [...document.querySelectorAll(`[role="${name}"]`)].find((e) => {
      const t = e.textContent.trim();
      return t !== '' && t.includes(text);
    });
    return el && el.textContent.trim();
  }, wait, name, text).then((h) => h.jsonValue()).catch(async () => {
    const got = await page.$$eval('[role="status"], [role="alert"]', (es) => es.map((e) => `${e.getAttribute('role')}: ${e.textContent.trim()}`));
    throw new Error(`no role="${name}" with ${JSON.stringify(text)} on ${page.url()}; status and alerts: ${JSON.stringify(got)}`);
  });
}

async function storedToken(page) {
  return page.evaluate(() => {
    try {
      return JSON.parse(localStorage.getItem('pocketbase_auth') || '{}').token || '';
    } catch {
      return '';
    }
  });
}

const dash = cfg.base + '/_/';

await step('sign in', async () => {
  const page = await open(dash + '#/login');
  await heading(page, 'Sign in');
  await shot(page, 'login');
  await fill(page, 'Email', cfg.email);
  await fill(page, 'Password', cfg.password);
  await submit(page, 'Sign in');
  await heading(page, 'Logs');
  assert(new URL(page.url()).hash === '#/logs', `signed in at ${page.url()}, want #/logs`);
  const links = await page.$$eval('nav[aria-label="Main"] a', (as) => as.map((a) => a.textContent.trim()));
  for (const want of ['Logs', 'Collections', 'Settings', 'Backups']) {
    assert(links.includes(want), `nav Main links ${JSON.stringify(links)}, want ${want}`);
  }
  const token = await storedToken(page);
  assert(token !== '', 'no token in localStorage pocketbase_auth after signing in');
  assert(!page.url().includes(token), 'the token is in the URL');
  await shot(page, 'logs');
  await page.close();
});

await step('sign out', async () => {
  const page = await open(dash + '#/logs');
  await heading(page, 'Logs');
  const button = await page.waitForFunction(() => [...document.querySelectorAll('button')]
    .find((b) => b.textContent.trim() === 'Sign out'), wait);
  await button.asElement().click();
  await heading(page, 'Sign in');
  assert(new URL(page.url()).hash === '#/login', `signed out at ${page.url()}, want #/login`);
  assert(await storedToken(page) === '', 'localStorage pocketbase_auth still holds a token after signing out');
  await page.close();
});

await step('signed out, #/logs goes to #/login', async () => {
  const page = await open(dash + '#/logs');
  await heading(page, 'Sign in');
  assert(new URL(page.url()).hash === '#/login', `at ${page.url()}, want #/login`);
  await page.close();
});

await step('password reset from the mail', async () => {
  const page = await open(cfg.resetLink);
  await heading(page, 'Reset your password');
  await shot(page, 'reset-password');
  await fill(page, 'New password', cfg.newPassword);
  await fill(page, 'Confirm new password', cfg.newPassword);
  await submit(page, 'Set new password');
  await role(page, 'status', 'Your password has been changed.');
  await shot(page, 'reset-password-done');
  await page.close();
});

await step('the used reset link', async () => {
  expectFailedRequest = true;
  try {
    const page = await open(cfg.resetLink);
    await heading(page, 'Reset your password');
    await fill(page, 'New password', cfg.newPassword + '-again');
    await fill(page, 'Confirm new password', cfg.newPassword + '-again');
    await submit(page, 'Set new password');
    const text = await role(page, 'alert', '');
    console.log('alert used-reset ' + JSON.stringify(text));
    await shot(page, 'reset-password-used');
    await page.close();
  } finally {
    expectFailedRequest = false;
  }
});

await step('a malformed token', async () => {
  const page = await open(dash + '#/auth/confirm-verification/not-a-token');
  await heading(page, 'Email verification');
  await role(page, 'alert', 'Invalid or expired token.');
  const sent = page.apiRequests.filter((r) => r.includes('/confirm-'));
  assert(sent.length === 0, `a malformed token was sent: ${JSON.stringify(sent)}`);
  await shot(page, 'verification-malformed');
  await page.close();
});

await step('verification from the mail', async () => {
  const page = await open(cfg.verifyLink);
  await heading(page, 'Email verification');
  await role(page, 'status', 'Your email has been verified.');
  await shot(page, 'verification-done');
  await page.close();
});

await step('email change from the mail', async () => {
  const page = await open(cfg.emailChangeLink);
  await heading(page, 'Confirm new email');
  await shot(page, 'email-change');
  await fill(page, 'Password', cfg.userPassword);
  await submit(page, 'Confirm new email');
  await role(page, 'status', 'Your email address has been changed.');
  await shot(page, 'email-change-done');
  await page.close();
});

await step('no console error, no page error', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
