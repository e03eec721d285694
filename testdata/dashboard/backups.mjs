// Walks through the dashboard's Backups screen (#/settings/backups) in
// headless Chromium. TestDashboardBackupsBrowser
// (dashboard_backups_browser_test.go) runs it against a strongbox child
// process (a restore re-executes it):
//
//	node backups.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package
// and JOURNEY a JSON object: base, chromium, shots (as journey.mjs takes
// them), email and password (the superuser), created (the name to create
// a backup with), downloads (a dir the browser downloads into),
// uploadFile (the path of an archive to upload), appNameBefore and
// appNameAfter (meta.appName at the backup, and set after it). It prints
// "ok NAME" per step, "shot PATH" per screenshot, "download PATH" for the
// file the browser downloaded, and "FAIL NAME: DETAIL" for the first step
// that fails, then stops.
import fs from 'node:fs';
import path from 'node:path';
import { assert, bothWidths, cfg, failed, launch, step } from './harness.mjs';


const wait = { timeout: 15000 };
let shotN = 0;
// Console and page errors; a step that expects failed requests (a 400
// shown as a field error, the 503s and refused connections of a restart)
// sets expected to the pattern of the console messages they log.
const problems = [];
let expected = null;
const uploadName = path.basename(cfg.uploadFile);

async function expecting(pattern, fn) {
  expected = pattern;
  try {
    return await fn();
  } finally {
    expected = null;
  }
}

const browser = await launch();

async function open(url) {
  const page = await browser.newPage();
  page.setDefaultTimeout(wait.timeout);
  await page.setViewport({ width: 1024, height: 720 });
  page.apiRequests = [];
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const t = m.text();
    if (expected && expected.test(t)) return;
    problems.push(`console error on ${page.url()}: ${t}`);
  });
  page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e && e.message || e}`));
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/')) page.apiRequests.push(`${r.method()} ${r.url()}`);
  });
  await page.goto(url, { waitUntil: 'load' });
  return page;
}

async function shot(page, name) {
  shotN++;
  const file = path.join(cfg.shots, `backups-${String(shotN).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log('shot ' + file);
}

async function heading(page, text, timeout = wait.timeout) {
  await page.waitForFunction((text) => {
    const hs = document.querySelectorAll('h1');
    return hs.length === 1 && hs[0].textContent.trim() === text;
  }, { timeout }, text).catch(async () => {
    const got = await page.$$eval('h1', (hs) => hs.map((h) => h.textContent.trim())).catch(() => []);
    throw new Error(`want one h1 ${JSON.stringify(text)} on ${page.url()}, got ${JSON.stringify(got)}`);
  });
}

async function control(page, label) {
  const el = await page.waitForFunction((label) => {
    const l = [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === label);
    return l && l.control;
  }, wait, label).catch(() => { throw new Error(`no field labelled ${JSON.stringify(label)} on ${page.url()}`); });
  return el.asElement();
}

async function fill(page, label, value) {
  const input = await control(page, label);
  await input.click({ clickCount: 3 });
  await input.type(value);
}

async function submit(page, text) {
  const button = await page.waitForFunction((text) => [...document.querySelectorAll('form button[type="submit"]')]
    .find((b) => b.textContent.trim() === text && !b.disabled), wait, text)
    .catch(() => { throw new Error(`no enabled submit button ${JSON.stringify(text)} on ${page.url()}`); });
  await button.asElement().click();
}

// rowButton clicks the button whose accessible name is label (a row's
// "Delete NAME").
async function rowButton(page, label) {
  const b = await page.waitForSelector(`button[aria-label=${JSON.stringify(label)}]:not([disabled])`)
    .catch(() => { throw new Error(`no enabled button ${JSON.stringify(label)} on ${page.url()}`); });
  await b.click();
}

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

// listed returns the names in the backup list, top to bottom.
async function listed(page) {
  return page.$$eval('.backup-name', (tds) => tds.map((td) => td.textContent.trim()));
}

async function waitListed(page, name, want) {
  await page.waitForFunction((name, want) => [...document.querySelectorAll('.backup-name')]
    .some((td) => td.textContent.trim() === name) === want, wait, name, want)
    .catch(async () => { throw new Error(`${name} ${want ? 'not' : 'still'} listed: ${JSON.stringify(await listed(page))}`); });
}

// apiCall calls the JSON API from the page with the stored token.
async function apiCall(page, method, p, body) {
  return page.evaluate(async (method, p, body) => {
    const token = JSON.parse(localStorage.getItem('pocketbase_auth') || '{}').token || '';
    const res = await fetch(p, { method, headers: { Authorization: token, 'Content-Type': 'application/json' }, body: body === null ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.text() };
  }, method, p, body === undefined ? null : body);
}

const dash = cfg.base + '/_/';
let page;

async function signIn(p) {
  await heading(p, 'Sign in');
  await fill(p, 'Email', cfg.email);
  await fill(p, 'Password', cfg.password);
  await submit(p, 'Sign in');
  await heading(p, 'Logs');
}

await step('sign in and open Backups', async () => {
  page = await open(dash + '#/login');
  await signIn(page);
  const link = await page.waitForSelector('nav[aria-label="Main"] a[href="#/settings/backups"]');
  await link.click();
  await heading(page, 'Backups');
  assert(new URL(page.url()).hash === '#/settings/backups', `at ${page.url()}`);
  await page.waitForSelector('.backup-list:not([aria-busy])');
  await shot(page, 'empty');
});

await step('create a backup with a name', async () => {
  await fill(page, 'Name (optional)', cfg.created);
  await submit(page, 'Create backup');
  await role(page, 'status', `Backup ${cfg.created} created.`);
  await waitListed(page, cfg.created, true);
  await shot(page, 'created');
});

await step('download it with a file token', async () => {
  const cdp = await browser.target().createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: cfg.downloads, eventsEnabled: true });
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the download did not complete within 15 s')), wait.timeout);
    cdp.on('Browser.downloadProgress', (e) => {
      if (e.state === 'completed') { clearTimeout(timer); resolve(); }
      if (e.state === 'canceled') { clearTimeout(timer); reject(new Error('the download was canceled')); }
    });
  });
  // The download is no request of the page's: record the links clicked.
  await page.evaluate(() => {
    window.clickedLinks = [];
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      window.clickedLinks.push(this.href);
      return click.call(this);
    };
  });
  await rowButton(page, `Download ${cfg.created}`);
  await done;
  const file = path.join(cfg.downloads, cfg.created);
  assert(fs.existsSync(file), `no ${file} after the download: ${JSON.stringify(fs.readdirSync(cfg.downloads))}`);
  const token = JSON.parse(await page.evaluate(() => localStorage.getItem('pocketbase_auth'))).token;
  const reqs = page.apiRequests;
  assert(reqs.some((r) => r === `POST ${cfg.base}/api/files/token`), `no file token asked: ${JSON.stringify(reqs)}`);
  const links = await page.evaluate(() => window.clickedLinks);
  const url = links.find((l) => l.startsWith(`${cfg.base}/api/backups/${cfg.created}?token=`));
  assert(url, `no download link: ${JSON.stringify(links)}`);
  assert(!url.includes(token) && !reqs.some((r) => r.includes(token)), 'the superuser token went in a URL');
  console.log('download ' + file);
});

await step('upload an archive with the progress bar', async () => {
  const input = await control(page, 'Archive to upload (.zip)');
  await input.uploadFile(cfg.uploadFile);
  await submit(page, 'Upload');
  await role(page, 'status', `Backup ${uploadName} uploaded.`);
  const prog = await page.$eval('#upload-progress', (p) => ({ value: p.value, max: p.max, text: p.labels[0] && p.parentElement.querySelector('output').textContent }));
  assert(prog.value === 100 && prog.max === 100 && prog.text === '100%', `the progress bar at the end: ${JSON.stringify(prog)}`);
  await waitListed(page, uploadName, true);
  const names = await listed(page);
  assert(names.indexOf(uploadName) < names.indexOf(cfg.created), `not newest first: ${JSON.stringify(names)}`);
  await shot(page, 'uploaded');
});

await step('a refused name says the pattern; a failed upload its reason, with no progress bar left', async () => {
  await expecting(/status of 400/, async () => {
    await fill(page, 'Name (optional)', 'Bad Name!.zip');
    await submit(page, 'Create backup');
    await page.waitForFunction(() => document.getElementById('err-name').textContent !== '', wait);
    const nameErr = await page.$eval('#err-name', (p) => p.textContent.trim());
    assert(nameErr.includes('lowercase letters, digits, _ and - only, ending in .zip'), `name error ${JSON.stringify(nameErr)}`);
    console.log('name-error ' + JSON.stringify(nameErr));
    // A change to the form clears the banner.
    await page.type('#f-name', 'x');
    const left = await page.$eval('.backups > .notice', (n) => n.textContent);
    assert(left === '', `after a change the banner still says ${JSON.stringify(left)}`);
    await page.$eval('#f-name', (i) => { i.value = ''; });

    const input = await control(page, 'Archive to upload (.zip)');
    await input.uploadFile(cfg.badUploadFile);
    await submit(page, 'Upload');
    await page.waitForFunction(() => document.getElementById('err-file').textContent !== '', wait);
    const got = await page.evaluate(() => ({
      err: document.getElementById('err-file').textContent.trim(),
      progress: !document.querySelector('.upload-progress').hidden,
      busy: document.querySelector('.upload-progress').closest('form').querySelector('button').disabled,
    }));
    assert(got.err !== '' && !got.progress, `after a refused upload: ${JSON.stringify(got)}`);
    console.log('upload-error ' + JSON.stringify(got.err));
    await shot(page, 'upload-refused');
    await bothWidths(page, 'backups', 'upload-refused');
    await page.$eval('#f-file', (i) => { i.value = ''; });
  });
});

await step('auto-backup settings, a field error and the S3 test', async () => {
  await expecting(/status of 400/, async () => {
    await page.select('#f-preset', '0 0 * * *');
    const cron = await page.$eval('#f-backups\\.cron', (i) => i.value);
    assert(cron === '0 0 * * *', `the daily preset set the cron to ${JSON.stringify(cron)}`);
    await fill(page, 'Automatic backups to keep', '0');
    await submit(page, 'Save settings');
    await role(page, 'alert', '');
    const err = await page.$eval('#err-backups\\.cronMaxKeep', (p) => p.textContent.trim());
    assert(err !== '', 'no error next to the keep field');
    const invalid = await page.$eval('#f-backups\\.cronMaxKeep', (i) => i.getAttribute('aria-invalid'));
    assert(invalid === 'true', 'the keep field is not marked invalid');
    await shot(page, 'settings-error');
    await fill(page, 'Automatic backups to keep', '5');
    await submit(page, 'Save settings');
    await role(page, 'status', 'Settings saved.');
    const s = JSON.parse((await apiCall(page, 'GET', '/api/settings')).body);
    assert(s.backups.cron === '0 0 * * *' && s.backups.cronMaxKeep === 5, `saved backups ${JSON.stringify(s.backups)}`);
    await submit(page, 'Test connection');
    await role(page, 'alert', 'S3 storage filesystem is not enabled.');
    await shot(page, 'settings');
  });
});

await step('retention keeps and the archive check', async () => {
  await expecting(/status of 400/, async () => {
    await fill(page, 'Also keep one a day, for this many days', '-1');
    await submit(page, 'Save settings');
    await role(page, 'alert', '');
    const err = await page.$eval('#err-backups\\.cronKeepDaily', (p) => p.textContent.trim());
    assert(err !== '', 'no error next to the daily keep');
  });
  await fill(page, 'Also keep one a day, for this many days', '7');
  await fill(page, 'One a week, for this many weeks', '4');
  const rule = await page.$eval('#bk-retention', (p) => p.textContent);
  assert(rule.includes('the last 7 days') && rule.includes('the last 4 weeks'), `the retention reads ${JSON.stringify(rule)}`);
  await submit(page, 'Save settings');
  await role(page, 'status', 'Settings saved.');
  const s = JSON.parse((await apiCall(page, 'GET', '/api/settings')).body);
  assert(s.backups.cronKeepDaily === 7 && s.backups.cronKeepWeekly === 4 && s.backups.cronKeepMonthly === 0 && s.backups.checkCron === '0 4 * * 0',
    `saved backups ${JSON.stringify(s.backups)}`);
  await page.click('#bk-check-now');
  await page.waitForFunction(() => /passed the last check\./.test(document.getElementById('bk-check-state').textContent), wait)
    .catch(async () => { throw new Error(`the check state reads ${JSON.stringify(await page.$eval('#bk-check-state', (d) => d.textContent))}`); });
  const shown = await page.$eval('#bk-check-state', (d) => d.textContent);
  assert(!shown.includes('null') && shown.includes('2 archives good'), `the check state reads ${JSON.stringify(shown)}`);
  await page.$eval('#bk-check', (h) => h.scrollIntoView());
  await shot(page, 'check');
  await bothWidths(page, 'backups', 'check');
});

await step('encryption: a field error, a generated identity, an encrypted archive', async () => {
  await expecting(/status of 400/, async () => {
    await (await control(page, 'Encrypt new backups (age)')).click();
    await fill(page, 'Identity (private key)', 'AGE-SECRET-KEY-1NOTAKEY');
    await submit(page, 'Save encryption');
    await role(page, 'alert', '');
    const err = await page.$eval('#err-backups\\.encryption\\.identity', (p) => p.textContent.trim());
    assert(err !== '', 'no error next to the identity field');
    await shot(page, 'encryption-error');
  });
  await page.click('#f-backups\\.encryption\\.identity', { clickCount: 3 });
  await page.keyboard.press('Backspace');
  const gen = await page.waitForFunction(() => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Generate identity'), wait);
  await gen.asElement().click();
  await page.waitForFunction(() => document.getElementById('f-backups.encryption.identity').value.startsWith('AGE-SECRET-KEY-1'), wait)
    .catch(() => { throw new Error('Generate identity filled no AGE-SECRET-KEY-1… (no WebCrypto X25519?)'); });
  const identity = await page.$eval('#f-backups\\.encryption\\.identity', (i) => i.value);
  const shown = await page.$eval('code.key', (c) => c.textContent.trim());
  assert(/^age1[0-9a-z]{58}$/.test(shown), `the generated recipient shown is ${JSON.stringify(shown)}`);
  await submit(page, 'Save encryption');
  await role(page, 'status', 'Encryption saved.');
  const raw = (await apiCall(page, 'GET', '/api/settings')).body;
  const enc = JSON.parse(raw).backups.encryption;
  assert(enc.enabled && enc.recipient === shown && !enc.identity, `saved encryption ${JSON.stringify(enc)}`);
  assert(!raw.includes(identity), 'GET /api/settings holds the identity');
  const left = await page.$eval('#f-backups\\.encryption\\.identity', (i) => i.value + '|' + i.type);
  assert(left === '|password', `the identity field after saving: ${left}`);
  await bothWidths(page, 'backups', 'encryption');
  // An archive created now is an age file, as downloaded.
  const made = await apiCall(page, 'POST', '/api/backups', { name: 'enc_journey.zip' });
  assert(made.status === 204, `create: ${made.status} ${made.body}`);
  const head = await page.evaluate(async () => {
    const token = JSON.parse(localStorage.getItem('pocketbase_auth') || '{}').token || '';
    const t = await (await fetch('/api/files/token', { method: 'POST', headers: { Authorization: token } })).json();
    const res = await fetch('/api/backups/enc_journey.zip?token=' + encodeURIComponent(t.token));
    return new TextDecoder().decode(new Uint8Array(await res.arrayBuffer()).slice(0, 22));
  });
  assert(head === 'age-encryption.org/v1\n', `the downloaded archive starts ${JSON.stringify(head)}`);
  const del = await apiCall(page, 'DELETE', '/api/backups/enc_journey.zip');
  assert(del.status === 204, `delete: ${del.status}`);
});

await step('continuous backup: its state, and refused without S3', async () => {
  const off = await page.$eval('.stream .hint', (p) => p.textContent);
  assert(/Continuous backup is off/.test(off), `the stream section says ${JSON.stringify(off)}`);
  await expecting(/status of 400/, async () => {
    await page.click('#f-backups\\.continuous\\.enabled');
    await submit(page, 'Save settings');
    await role(page, 'alert', '');
    const err = await page.$eval('#err-backups\\.continuous\\.enabled', (p) => p.textContent.trim());
    assert(/needs backups\.s3/.test(err), `the error next to continuous backup: ${JSON.stringify(err)}`);
    await shot(page, 'stream-refused');
    await page.click('#f-backups\\.continuous\\.enabled');
  });
  const st = JSON.parse((await apiCall(page, 'GET', '/api/backups/stream')).body);
  assert(st.enabled === false && st.lastShipped === '', `GET /api/backups/stream: ${JSON.stringify(st)}`);
});

await step('the create button while a backup runs', async () => {
  const p = await browser.newPage();
  p.setDefaultTimeout(wait.timeout);
  p.on('pageerror', (e) => problems.push(`page error on ${p.url()}: ${e && e.message || e}`));
  await p.setRequestInterception(true);
  p.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/health') {
      r.respond({ status: 200, contentType: 'application/json', body: JSON.stringify({ message: 'API is healthy.', code: 200, data: { canBackup: false } }) });
    } else {
      r.continue();
    }
  });
  // And at the narrowest width the dashboard supports.
  await p.setViewport({ width: 360, height: 720 });
  await p.goto(dash + '#/settings/backups', { waitUntil: 'load' });
  await heading(p, 'Backups');
  await p.waitForFunction(() => {
    const b = [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Create backup');
    const why = document.getElementById('create-reason');
    return b && b.disabled && why && !why.hidden && why.textContent.includes('running');
  }, wait).catch(() => { throw new Error('the create button is not disabled with its reason while canBackup is false'); });
  await p.waitForSelector('.backup-list:not([aria-busy])');
  const width = await p.evaluate(() => document.documentElement.scrollWidth);
  assert(width <= 360, `the screen is ${width} px wide in a 360 px window`);
  await shot(p, 'cannot-backup');
  await p.close();
});

await step('delete with confirmation', async () => {
  await rowButton(page, `Delete ${uploadName}`);
  await page.waitForSelector('form.confirm');
  await shot(page, 'delete-confirm');
  await submit(page, 'Delete');
  await role(page, 'status', `Backup ${uploadName} deleted.`);
  await waitListed(page, uploadName, false);
});

await step('restore through the UI', async () => {
  const patched = await apiCall(page, 'PATCH', '/api/settings', { meta: { appName: cfg.appNameAfter } });
  assert(patched.status === 200, `PATCH appName: ${patched.status} ${patched.body}`);
  await rowButton(page, `Restore ${cfg.created}`);
  const disabled = await page.$eval('form.confirm button[type="submit"]', (b) => b.disabled);
  assert(disabled, 'Restore is enabled before the name is typed');
  await fill(page, 'Type the backup name to confirm', cfg.created);
  await shot(page, 'restore-confirm');
  // The restart's 503s and refused connections are expected.
  await expecting(/Failed to load resource|ERR_/, async () => {
    const reloaded = page.waitForNavigation({ timeout: 120000 });
    await submit(page, 'Restore');
    await heading(page, 'Restoring backup');
    await shot(page, 'restoring');
    await reloaded;
    await page.waitForFunction(() => {
      const h = document.querySelector('h1');
      return h && (h.textContent.trim() === 'Backups' || h.textContent.trim() === 'Sign in');
    }, wait);
  });
  if (await page.$eval('h1', (h) => h.textContent.trim()) === 'Sign in') {
    await signIn(page);
    await page.goto(dash + '#/settings/backups');
  }
  await heading(page, 'Backups');
  await role(page, 'status', `Backup ${cfg.created} restored`);
  await waitListed(page, cfg.created, true);
  const s = JSON.parse((await apiCall(page, 'GET', '/api/settings')).body);
  assert(s.meta.appName === cfg.appNameBefore, `appName after the restore ${JSON.stringify(s.meta.appName)}, want ${JSON.stringify(cfg.appNameBefore)}`);
  await shot(page, 'restored');
  await bothWidths(page, 'backups', 'restored');
});

await step('no console error, no page error', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
