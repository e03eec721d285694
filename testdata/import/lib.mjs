// What seed.mjs (run against PocketBase) and check.mjs (run against the
// strongbox that imported its data) share: the plan TestImportPocketBase
// (import_pocketbase_test.go) writes, the step runner, the sign-ins through
// the loopback OAuth2 provider and the SMTP sink, and the queries whose
// answers the test compares between the two servers.
import { readFileSync, writeFileSync } from 'node:fs';

const { default: PocketBase, ClientResponseError } = await import(process.env.SDK_MODULE);
export { PocketBase, ClientResponseError };

// plan is the JSON file the test wrote: accounts, passwords, the
// provider's and the mailbox's URLs.
export const plan = JSON.parse(readFileSync(process.env.IMPORT_PLAN, 'utf8'));

export function writeJSON(path, v) {
  writeFileSync(path, JSON.stringify(v, null, 1));
}

export function assert(cond, what) {
  if (!cond) throw new Error(what);
}

let failed = false;

// step runs fn, printing "ok NAME (its time)", or "FAIL NAME: why" and making every
// later step a no-op and the process exit 1.
export async function step(name, fn) {
  if (failed) return;
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed = true;
    process.exitCode = 1;
    const detail = e instanceof ClientResponseError ? `${e.status} ${JSON.stringify(e.response)} (${e.url})` : String(e && e.stack || e);
    console.log(`FAIL ${name}: ${detail}`);
  }
}

// client is a new SDK client of base that does not cancel requests.
export function client(base) {
  const pb = new PocketBase(base);
  pb.autoCancellation(false);
  return pb;
}

// superusers signs every superuser of the plan in with its password, and
// returns a client of base signed in as the first.
export async function superusers(base) {
  for (const s of plan.superusers) {
    const r = await client(base).collection('_superusers').authWithPassword(s.email, s.password);
    assert(r.record.email === s.email, `signed in as ${r.record.email}`);
  }
  const su = client(base);
  await su.collection('_superusers').authWithPassword(plan.superusers[0].email, plan.superusers[0].password);
  return su;
}

// expectError runs fn, which must fail with a ClientResponseError of
// status; it returns the error.
export async function expectError(fn, status) {
  try {
    await fn();
  } catch (e) {
    assert(e instanceof ClientResponseError, `want a ClientResponseError, got ${e}`);
    assert(e.status === status, `want status ${status}, got ${e.status} ${JSON.stringify(e.response)}`);
    return e;
  }
  throw new Error(`want a ${status} error, got success`);
}

// mailedCode returns the one-time password of the newest mail to `to`
// whose subject contains "OTP", from the test's mailbox (the SMTP sink).
export async function mailedCode(to) {
  const res = await fetch(`${plan.mailbox}/mail?to=${encodeURIComponent(to)}&subject=OTP`);
  assert(res.status === 200, `no OTP mail to ${to} reached the SMTP sink (${res.status})`);
  const mail = await res.json();
  const m = mail.text.replace(/<[^>]*>/g, ' ').match(/\b(\d{8})\b/);
  assert(m, `no 8-digit code in the mail to ${to}: ${mail.text}`);
  return m[1];
}

// signInMFA signs the MFA account in: its password must be answered 401
// with an mfaId, and the OTP mailed to it completes the sign-in. It returns
// the auth result.
export async function signInMFA(base, a) {
  const pb = client(base);
  const e = await expectError(() => pb.collection(a.collection).authWithPassword(a.email, a.password), 401);
  const mfaId = e.response.mfaId;
  assert(typeof mfaId === 'string' && mfaId !== '', `no mfaId in ${JSON.stringify(e.response)}`);
  const { otpId } = await pb.collection(a.collection).requestOTP(a.email);
  const code = await mailedCode(a.email);
  const r = await pb.collection(a.collection).authWithOTP(otpId, code, { mfaId });
  assert(pb.authStore.isValid, 'no token after the OTP');
  return r;
}

// signInOAuth2 plays the browser of the "oidc" provider's code flow: it
// opens the authURL of auth-methods, takes the code from the provider's
// redirect and completes auth-with-oauth2 with it. The provider signs in
// whoever the test told it to (Provider.SignIn).
export async function signInOAuth2(base, collection) {
  const pb = client(base);
  const methods = await pb.collection(collection).listAuthMethods();
  const p = (methods.oauth2.providers || []).find((x) => x.name === 'oidc');
  assert(methods.oauth2.enabled && p, `no enabled "oidc" provider in ${JSON.stringify(methods.oauth2)}`);
  const redirectURL = base + '/api/oauth2-redirect';
  const res = await fetch(p.authURL + encodeURIComponent(redirectURL), { redirect: 'manual' });
  const loc = new URL(res.headers.get('location') || 'x:', 'http://invalid');
  assert(res.status === 302 && loc.searchParams.get('code'), `the provider answered ${res.status} ${loc}`);
  assert(loc.searchParams.get('state') === p.state, 'the provider echoed another state');
  return pb.collection(collection).authWithOAuth2Code('oidc', loc.searchParams.get('code'), p.codeVerifier, redirectURL);
}

// queries are the logs queries whose answers must be the same on both
// servers; T bounds them, so that later requests change nothing.
export function queries(T) {
  const b = `created <= "${T}"`;
  return [
    { page: 1, perPage: 50, filter: b, sort: '-created,-id' },
    { page: 2, perPage: 20, filter: `${b} && data.status >= 400`, sort: 'data.status,-created,id' },
    { page: 1, perPage: 100, filter: `${b} && data.method = "POST"`, sort: 'created,id' },
    { page: 3, perPage: 30, filter: `${b} && data.url ~ "/api/collections/"`, sort: 'data.url,id' },
    { page: 1, perPage: 40, filter: `${b} && level > 0`, sort: '-level,created,id' },
    { page: 2, perPage: 5, filter: `${b} && data.auth = "_superusers"`, sort: '-created,id' },
    { page: 1, perPage: 10, filter: `${b} && data.status = 200 && data.method = "GET"`, sort: '-data.url,created,id', skipTotal: true },
  ];
}

// answers asks pb (signed in as a superuser) what the test compares: the
// settings, the logs queries and their stats.
export async function answers(pb, T) {
  const out = { settings: await pb.settings.getAll(), logs: [], stats: [] };
  for (const q of queries(T)) {
    const { page, perPage, ...opts } = q;
    out.logs.push({ query: q, answer: await pb.logs.getList(page, perPage, opts) });
    out.stats.push({ filter: q.filter, answer: await pb.logs.getStats({ filter: q.filter }) });
  }
  return out;
}
