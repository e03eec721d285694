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
