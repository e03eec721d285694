// Drives the dashboard's Logs screen in headless Chromium.
// TestDashboardLogsBrowser (dashboard_logs_browser_test.go) runs it against
// a strongbox whose logs it has seeded:
//
//	node logs.mjs
//
// with PUPPETEER_MODULE the path of an installed puppeteer-core package and
// JOURNEY a JSON object: base, chromium, shots, email and password (as for
// journey.mjs), hostileID and hostileURL (the log of a request whose URL
// holds markup), word and wordCount (a bare word that wordCount logged
// URLs hold). With timingOnly it only signs in and prints the time from
// navigating to #/logs until the chart and the first page are drawn
// ("timing logs-screen-ms N"), runs times (default 5), for a server seeded
// with many logs.
// It prints "ok NAME" per step, "shot PATH" per screenshot and
// "FAIL NAME: DETAIL" for the first step that fails, then stops.
import path from 'node:path';
import { assert, bothWidths, cfg, failed, launch, step } from './harness.mjs';


const wait = { timeout: 15000 };
const dash = cfg.base + '/_/';
const superusersPreset = '(data.auth!="_superusers")';
let shotN = 0;
const problems = [];
// The settings step's invalid value and the bad filter are answered 400,
// which Chromium logs.
let expectFailedRequest = false;

const browser = await launch();

// newPage opens a tab that reports console errors, page errors and
// dialogs (an alert() from a log would be one).
async function newPage() {
  const page = await browser.newPage();
  page.setDefaultTimeout(wait.timeout);
  await page.setViewport({ width: 1100, height: 800 });
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (expectFailedRequest && /^Failed to load resource: the server responded with a status of 400/.test(m.text())) return;
    problems.push(`console error on ${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e && e.message || e}`));
  page.on('dialog', async (d) => {
    problems.push(`dialog ${d.type()} on ${page.url()}: ${d.message()}`);
    await d.dismiss();
  });
  return page;
}

async function shot(page, name) {
  shotN++;
  const file = path.join(cfg.shots, `logs-${String(shotN).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log('shot ' + file);
}

// drawn waits until the chart and the list have drawn their answers, and
// returns the time then (ms since the navigation started), taken in the
// page at the first animation frame that shows both.
async function drawn(page) {
  const t = await page.waitForFunction(() => {
    const chart = document.querySelector('section.chart-box');
    const list = document.querySelector('section.logs-list');
    const done = chart && list && !chart.hasAttribute('aria-busy') && !list.hasAttribute('aria-busy');
    return done && performance.now();
  }, { ...wait, polling: 'raf' });
  return t.jsonValue();
}

// bars reads the chart's bars from their accessible text ("YYYY-MM-DD
// HH:00Z: N logs") as {hour: total}.
async function bars(page) {
  const labels = await page.$$eval('svg.chart rect.bar', (rs) => rs.map((r) => r.getAttribute('aria-label')));
  const out = {};
  for (const l of labels) {
    const m = /^(\d{4}-\d\d-\d\d \d\d):00Z: (\d+) logs?$/.exec(l);
    assert(m, `bar text ${JSON.stringify(l)}`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

// stats asks the API for the hourly totals of filter, as {hour: total}.
async function stats(page, filter) {
  const list = await page.evaluate(async (filter) => {
    const token = JSON.parse(localStorage.getItem('pocketbase_auth')).token;
    const res = await fetch('/api/logs/stats?' + new URLSearchParams({ filter }), { headers: { Authorization: token } });
    return res.json();
  }, filter);
  return Object.fromEntries(list.map((e) => [e.date.slice(0, 13), e.total]));
}

async function search(page, text) {
  await page.$eval('#f-filter', (i) => { i.value = ''; });
  await page.type('#f-filter', text);
  await page.click('form[role="search"] button[type="submit"]');
  await drawn(page);
}

async function signIn(page, base = cfg.base) {
  await page.goto(base + '/_/#/login', { waitUntil: 'load' });
  await page.waitForSelector('#f-identity');
  await page.type('#f-identity', cfg.email);
  await page.type('#f-password', cfg.password);
  await page.click('form button[type="submit"]');
  await page.waitForFunction(() => location.hash === '#/logs' && document.querySelector('h1').textContent === 'Logs', wait);
}

if (cfg.timingOnly) {
  await step('timing', async () => {
    const page = await newPage();
    await signIn(page);
    await page.goto('about:blank');
    for (let i = 0; i < (cfg.runs || 5); i++) {
      await page.goto('about:blank');
      await page.goto(dash + '#/logs', { waitUntil: 'domcontentloaded' });
      const ms = await drawn(page);
      // When the API's answers came (ms since the navigation started).
      const api = await page.evaluate(() => performance.getEntriesByType('resource')
        .filter((e) => e.name.includes('/api/logs'))
        .map((e) => `${new URL(e.name).pathname} ${Math.round(e.startTime)}-${Math.round(e.responseEnd)}`).join(', '));
      console.log(`requests ${api}`);
      const n = await page.$$eval('.log-list > li', (ls) => ls.length);
      console.log(`timing logs-screen-ms ${Math.round(ms)} (${n} rows, ${await page.$eval('.total', (e) => e.textContent)})`);
    }
    await shot(page, 'timing');
  });
  await browser.close();
  process.exit(failed() ? 1 : 0);
}

const page = await newPage();

await step('sign in, the Logs screen', async () => {
  await signIn(page);
  await drawn(page);
  await shot(page, 'screen');
});

await step('the chart equals /api/logs/stats', async () => {
  // The sign-in request's own log may land after the chart was drawn:
  // search again until both agree, within the deadline.
  const deadline = Date.now() + 10000;
  for (;;) {
    const got = await bars(page);
    const want = await stats(page, superusersPreset);
    if (JSON.stringify(got) === JSON.stringify(want)) break;
    assert(Date.now() < deadline, `chart ${JSON.stringify(got)}, /api/logs/stats ${JSON.stringify(want)}`);
    await search(page, '');
  }
  const sum = Object.values(await bars(page)).reduce((a, b) => a + b, 0);
  const total = await page.$eval('.total', (e) => e.textContent);
  assert(total === `${sum} logs`, `the list shows ${JSON.stringify(total)}, the chart ${sum}`);
});

await step('include superuser requests', async () => {
  await page.click('#f-superusers');
  await drawn(page);
  const got = await bars(page);
  const want = await stats(page, '');
  assert(JSON.stringify(got) === JSON.stringify(want), `with superusers: chart ${JSON.stringify(got)}, stats ${JSON.stringify(want)}`);
  await page.click('#f-superusers');
  await drawn(page);
});

await step('Enter on a bar narrows to its hour; Reset', async () => {
  const first = await page.$eval('svg.chart rect.bar', (r) => Number(r.dataset.total));
  const before = await page.$eval('.total', (e) => e.textContent);
  await page.$eval('svg.chart rect.bar', (r) => r.focus());
  await page.keyboard.press('Enter');
  await drawn(page);
  const total = await page.$eval('.total', (e) => e.textContent);
  assert(total === `${first} ${first === 1 ? 'log' : 'logs'}`, `narrowed to the first bar's hour (${first}), the list shows ${total}`);
  assert(await page.$eval('.chart-head button', (b) => !b.disabled), 'Reset is disabled after narrowing');
  // One hour is counted by minute: the axis runs from HH:00 to HH:59 of
  // that hour, and the minutes add up to the hour's total.
  const c = await page.evaluate(() => ({
    axis: [...document.querySelectorAll('.chart-axis span')].map((x) => x.textContent),
    labels: [...document.querySelectorAll('svg.chart rect.bar')].map((r) => r.getAttribute('aria-label')),
  }));
  assert(c.axis.length === 3 && /:00Z$/.test(c.axis[0]) && /:59Z$/.test(c.axis[2]) && c.axis[0].slice(0, 13) === c.axis[2].slice(0, 13) &&
    c.axis[1].endsWith('per minute'), `axis ${JSON.stringify(c.axis)}`);
  const minutes = c.labels.map((l) => /^\d{4}-\d\d-\d\d \d\d:\d\dZ: (\d+) logs?$/.exec(l));
  assert(minutes.every(Boolean), `minute bars ${JSON.stringify(c.labels)}`);
  const sum = minutes.reduce((a, m) => a + Number(m[1]), 0);
  assert(sum === first, `the minutes add up to ${sum}, the hour has ${first}`);
  console.log('zoomed ' + JSON.stringify(c.axis));
  await shot(page, 'zoomed-hour');
  await page.click('.chart-head button');
  await drawn(page);
  const after = await page.$eval('.total', (e) => e.textContent);
  assert(after === before, `after Reset the list shows ${after}, want ${before}`);
});

await step('a bare word narrows the list and the chart', async () => {
  await search(page, cfg.word);
  const urls = await page.$$eval('.log-list .url', (us) => us.map((u) => u.textContent));
  assert(urls.length === cfg.wordCount && urls.every((u) => u.includes(cfg.word)), `rows ${JSON.stringify(urls)}`);
  const got = await bars(page);
  const sum = Object.values(got).reduce((a, b) => a + b, 0);
  assert(sum === cfg.wordCount, `the chart counts ${sum} for ${cfg.word}: ${JSON.stringify(got)}`);
  const want = await stats(page, `${superusersPreset}&&(level~"${cfg.word}"||message~"${cfg.word}"||data~"${cfg.word}")`);
  assert(JSON.stringify(got) === JSON.stringify(want), `chart ${JSON.stringify(got)}, stats ${JSON.stringify(want)}`);
  await shot(page, 'filtered');
});

await step('a bad filter says where, and clears the list and the chart', async () => {
  await page.$eval('#f-filter', (i) => { i.value = ''; });
  await page.type('#f-filter', 'level > 0 && ');
  // The refused filter's two 400s (list and stats), which Chromium logs.
  expectFailedRequest = true;
  await page.click('form[role="search"] button[type="submit"]');
  await page.waitForSelector('.filter-problem');
  await drawn(page);
  expectFailedRequest = false;
  const got = await page.evaluate(() => ({
    text: [...document.querySelectorAll('.filter-problem p')].map((p) => p.textContent),
    caret: (document.querySelector('.filter-caret') || {}).textContent,
    rows: document.querySelectorAll('.log-list > li').length,
    bars: document.querySelectorAll('svg.chart rect').length,
    total: document.querySelector('.total').textContent,
  }));
  assert(got.text[0] === 'Something went wrong while processing your request. Invalid filter.', `message ${JSON.stringify(got.text)}`);
  assert(/^The filter is not valid at the end: expected operand/.test(got.text[1] || ''), `position ${JSON.stringify(got.text)}`);
  assert(got.caret === 'level > 0 &&\n            ^', `caret ${JSON.stringify(got.caret)}`);
  assert(got.rows === 0 && got.bars === 0 && got.total === 'No logs: the filter is not valid.', `left behind: ${JSON.stringify(got)}`);
  console.log('filter-problem ' + JSON.stringify(got.text[1]));
  await shot(page, 'bad-filter');
  await bothWidths(page, 'logs', 'bad-filter');
  // The column's name works as the data key it is.
  await search(page, 'status >= 400');
  const statuses = await page.$$eval('.log-list .log-row > :nth-child(2)', (ss) => ss.map((s) => s.textContent));
  assert(!(await page.$('.filter-problem')) && statuses.length > 0 && statuses.every((x) => Number(x) >= 400), `status >= 400 lists ${JSON.stringify(statuses)}`);
});

await step('the hostile URL shows as text', async () => {
  await search(page, 'onerror');
  const row = await page.$eval(`.log-list button[data-id="${cfg.hostileID}"] .url`, (u) => u.textContent);
  assert(row === cfg.hostileURL, `the row shows ${JSON.stringify(row)}, want ${JSON.stringify(cfg.hostileURL)}`);
  const imgs = await page.$$eval('main img', (is) => is.length);
  assert(imgs === 0, `${imgs} img elements on the page`);
});

await step('the detail panel', async () => {
  await page.click(`.log-list button[data-id="${cfg.hostileID}"]`);
  await page.waitForSelector('dialog.log-detail[open] dl.fields');
  const fields = await page.$$eval('dialog.log-detail dl.fields dt', (ds) => Object.fromEntries(ds.map((d) => [d.textContent, d.nextElementSibling.textContent])));
  for (const k of ['id', 'created', 'level', 'message', 'data.url', 'data.method', 'data.status', 'data.type']) {
    assert(k in fields, `the panel has no ${k}: ${JSON.stringify(fields)}`);
  }
  assert(fields.id === cfg.hostileID && fields['data.url'] === cfg.hostileURL, `panel ${JSON.stringify(fields)}`);
  assert(await page.$$eval('dialog img', (is) => is.length) === 0, 'an img in the panel');
  assert(page.url().endsWith('#/logs?logId=' + cfg.hostileID), `the panel's URL is ${page.url()}`);
  await shot(page, 'detail');
  // Copy as JSON puts the entry the API returns on the clipboard.
  await browser.defaultBrowserContext().overridePermissions(cfg.base, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  await page.click('dialog.log-detail .actions button:not(.plain)');
  await page.waitForSelector('dialog.log-detail [role="status"]');
  const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert(copied.id === cfg.hostileID && copied.data.url === cfg.hostileURL, `copied ${JSON.stringify(copied)}`);
  await page.click('dialog.log-detail .actions button.plain');
  await page.waitForFunction(() => !document.querySelector('dialog.log-detail').open && location.hash === '#/logs', wait);
});

await step('the deep link opens the panel', async () => {
  const deep = await newPage();
  await deep.goto(dash + '#/logs?logId=' + encodeURIComponent(cfg.hostileID), { waitUntil: 'load' });
  await deep.waitForSelector('dialog.log-detail[open] dl.fields');
  const id = await deep.$eval('dialog.log-detail dl.fields dd', (d) => d.textContent);
  assert(id === cfg.hostileID, `the deep link's panel shows id ${id}`);
  await drawn(deep);
  await shot(deep, 'deep-link');
  await deep.close();
});

await step('the logs settings', async () => {
  expectFailedRequest = true;
  try {
    await page.$eval('#f-maxDays', (i) => { i.value = ''; });
    await page.type('#f-maxDays', '-1');
    await page.click('.logs-settings button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('err-maxDays').textContent !== '', wait);
    const err = await page.$eval('#err-maxDays', (e) => e.textContent);
    const alert = await page.$eval('.logs-settings [role="alert"]', (e) => e.textContent);
    const invalid = await page.$eval('#f-maxDays', (i) => i.getAttribute('aria-invalid'));
    assert(err !== '' && alert !== '' && invalid === 'true', `err-maxDays ${JSON.stringify(err)}, alert ${JSON.stringify(alert)}, aria-invalid ${invalid}`);
    console.log('settings-error ' + JSON.stringify(err));
  } finally {
    expectFailedRequest = false;
  }
  await page.$eval('#f-maxDays', (i) => { i.value = ''; });
  await page.type('#f-maxDays', String(cfg.maxDays));
  await page.click('.logs-settings button[type="submit"]');
  await page.waitForSelector('.logs-settings [role="status"]');
  await shot(page, 'settings');
  // The export is off on this server: one line saying so, naming the
  // variable.
  const off = await page.$eval('.log-export', (e) => e.textContent);
  assert(/Export is off/.test(off) && off.includes('OTEL_EXPORTER_OTLP_LOGS_ENDPOINT') && !off.includes('Logs behind'),
    `the export's state with export off: ${JSON.stringify(off)}`);
  console.log('export-off ' + JSON.stringify(off));
  await search(page, '');
  await bothWidths(page, 'logs', 'screen');
});

// The second server exports to a receiver (exportBase, exportEndpoint):
// its state shows the endpoint without the secrets the variables hold,
// and Refresh shows the logs acknowledged since.
await step("the export's state, on", async () => {
  if (!cfg.exportBase) throw new Error('no exportBase in JOURNEY');
  const on = await newPage();
  await signIn(on, cfg.exportBase);
  await on.waitForSelector('.log-export dl.fields');
  const rows = async () => on.$$eval('.log-export dl.fields dt', (dts) =>
    Object.fromEntries(dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent])));
  let r = await rows();
  assert(r.Endpoint === cfg.exportEndpoint && r.Protocol === 'http/protobuf', `rows ${JSON.stringify(r)}`);
  for (let i = 0; i < 50 && !/^[1-9]/.test(r.Exported); i++) {
    await on.click('.log-export .export-head button');
    await on.waitForFunction(() => !document.querySelector('.log-export').hasAttribute('aria-busy'), wait);
    r = await rows();
    if (!/^[1-9]/.test(r.Exported)) await new Promise((res) => setTimeout(res, 200));
  }
  assert(/^[1-9]/.test(r.Exported) && /^\d{4}-\d\d-\d\d /.test(r['Last success']) && r['Last error'] === 'none', `after Refresh: ${JSON.stringify(r)}`);
  const text = await on.$eval('.log-export', (e) => e.textContent);
  for (const secret of cfg.exportSecrets || []) assert(!text.includes(secret), `the state shows the secret ${secret}`);
  const summary = await on.$eval('.export-summary', (e) => e.textContent);
  console.log('export-on ' + JSON.stringify({ summary, ...r }));
  await on.$eval('.log-export', (e) => e.scrollIntoView());
  await bothWidths(on, 'logs', 'export-on');
  await on.close();
});

await step('no console error, page error or dialog', async () => {
  assert(problems.length === 0, problems.join('\n'));
});

await browser.close();
process.exit(failed() ? 1 : 0);
