// harness.mjs is what every dashboard browser script shares: its
// configuration (the JSON object in JOURNEY), puppeteer-core loaded from
// PUPPETEER_MODULE, steps that print "ok NAME" or "FAIL NAME: DETAIL" and
// skip the rest after a failure, and Chromium launched headless.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

export const cfg = JSON.parse(process.env.JOURNEY);
const puppeteer = (await import(pathToFileURL(path.join(process.env.PUPPETEER_MODULE, 'lib', 'esm', 'puppeteer', 'puppeteer-core.js')).href)).default;

let failedStep = false;

// failed reports whether a step failed.
export const failed = () => failedStep;

export function assert(cond, what) {
  if (!cond) throw new Error(what);
}

export async function step(name, fn) {
  if (failedStep) return;
  try {
    await fn();
    console.log('ok ' + name);
  } catch (e) {
    failedStep = true;
    console.log(`FAIL ${name}: ${String(e && e.stack || e)}`);
  }
}

export function launch() {
  return puppeteer.launch({
    executablePath: cfg.chromium,
    headless: true,
    // Chromium's sandbox refuses to run as root (CI runs as root); a
    // container's /dev/shm may be too small for it.
    args: ['--disable-dev-shm-usage', ...(process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [])],
  });
}

// watch records in problems every console error of page that expected
// does not accept (it gets the message's text), every page error and every
// dialog (dismissed).
export function watch(page, problems, expected) {
  page.on('console', (m) => {
    if (m.type() !== 'error' || expected(m.text())) return;
    problems.push(`console error on ${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e && e.message || e}`));
  page.on('dialog', async (d) => {
    problems.push(`dialog ${d.type()} on ${page.url()}: ${d.message()}`);
    await d.dismiss();
  });
}

let shots = 0;

// screenshot saves page whole as cfg.shots/PREFIX-NN-NAME.png, numbered in
// the order taken, and prints "shot PATH".
export async function screenshot(page, prefix, name) {
  shots++;
  const file = path.join(cfg.shots, `${prefix}-${String(shots).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log('shot ' + file);
}

// bothWidths screenshots page whole at 1280x900 and at 390x844 (a phone)
// as PREFIX-NN-NAME-1280.png and -390.png, fails when the page scrolls
// sideways at 390 px, and puts the viewport back as it was.
export async function bothWidths(page, prefix, name) {
  const before = page.viewport();
  try {
    for (const [width, height] of [[1280, 900], [390, 844]]) {
      await page.setViewport({ width, height });
      await new Promise((r) => setTimeout(r, 150));
      const wide = await page.evaluate(() => {
        const d = document.documentElement;
        return d.scrollWidth > d.clientWidth ? `${d.scrollWidth} px wide in ${d.clientWidth}` : '';
      });
      if (width === 390 && wide) throw new Error(`${prefix} ${name} scrolls sideways at 390 px: ${wide}`);
      await screenshot(page, prefix, `${name}-${width}`);
    }
  } finally {
    if (before) await page.setViewport(before);
  }
}
