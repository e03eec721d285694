// Checks, through the official JS SDK, a strongbox serving the data
// `strongbox import pocketbase` made of what seed.mjs left in PocketBase
// (TestImportPocketBase, import_pocketbase_test.go):
//
//	IMPORT_PLAN=plan.json SDK_MODULE=…/pocketbase.es.mjs node check.mjs BASE_URL ANSWERS_OUT
//
// Every account signs in with its PocketBase password (the MFA one is asked
// for its second factor and completes it with the OTP mailed to the SMTP
// sink the imported settings name), the OAuth2 account signs in through the
// provider to the same record, and the tokens PocketBase issued (a user's,
// a superuser's) still refresh; PocketBase's archive uploaded as a backup
// is refused with a message naming the import command. It writes the
// server's answers to the queries seed.mjs asked PocketBase to
// ANSWERS_OUT, for the test to compare; "ok NAME" per step, exit 1 at the
// first failure.
import { readFileSync } from 'node:fs';
import { plan, step, superusers, assert, client, expectError, writeJSON, signInMFA, signInOAuth2, answers } from './lib.mjs';

const [base, answersOut] = process.argv.slice(2);
const seed = JSON.parse(readFileSync(plan.seedOut, 'utf8'));
const acc = plan.accounts;

let su;
await step('superusers sign in with their PocketBase passwords', async () => {
  su = await superusers(base);
});

await step('users sign in with their PocketBase passwords', async () => {
  for (const k of ['verified', 'unverified', 'oauth']) {
    const a = acc[k];
    const r = await client(base).collection(a.collection).authWithPassword(a.email, a.password);
    assert(r.record.id === seed.ids[k], `${k}: signed in record ${r.record.id}, want ${seed.ids[k]}`);
    assert(r.record.verified === a.verified, `${k}: verified ${r.record.verified}`);
    for (const [f, v] of Object.entries(a.fields || {})) {
      assert(r.record[f] === v, `${k}: ${f} is ${JSON.stringify(r.record[f])}, want ${JSON.stringify(v)}`);
    }
  }
});

await step('wrong password refused', async () => {
  const a = acc.verified;
  try {
    await client(base).collection(a.collection).authWithPassword(a.email, a.password + 'x');
  } catch (e) {
    assert(e.status === 400, `status ${e.status}`);
    return;
  }
  throw new Error('a wrong password signed in');
});

await step('MFA asked and completed with the mailed OTP', async () => {
  const r = await signInMFA(base, acc.mfa);
  assert(r.record.id === seed.ids.mfa, `MFA signed in ${r.record.id}, want ${seed.ids.mfa}`);
});

await step('OAuth2 sign-in resolves to the linked record', async () => {
  const r = await signInOAuth2(base, acc.oauth.collection);
  assert(r.record.id === seed.ids.oauth, `the provider's user resolved to ${r.record.id}, want ${seed.ids.oauth}`);
  assert(r.meta.isNew === false, `meta.isNew ${r.meta.isNew}`);
});

await step('PocketBase-issued tokens refresh', async () => {
  const pb = client(base);
  pb.authStore.save(seed.token, null);
  const r = await pb.collection(acc.verified.collection).authRefresh();
  assert(r.record.id === seed.ids.verified, `refreshed record ${r.record.id}`);
  const root = client(base);
  root.authStore.save(seed.superuserToken, null);
  const rr = await root.collection('_superusers').authRefresh();
  assert(rr.record.email === plan.superusers[0].email, `refreshed superuser ${rr.record.email}`);
});

await step("PocketBase's archive uploaded is refused, naming the import command", async () => {
  const File = globalThis.File ?? (await import('node:buffer')).File;
  const zip = readFileSync(plan.backupPath);
  const e = await expectError(() => su.backups.upload({ file: new File([zip], 'from_pocketbase.zip', { type: 'application/zip' }) }), 400);
  const m = e.response.data && e.response.data.file && e.response.data.file.message;
  assert(typeof m === 'string' && m.includes('strongbox import pocketbase'), JSON.stringify(e.response));
  assert(!(await su.backups.getFullList()).some((b) => b.key === 'from_pocketbase.zip'), 'the refused archive is listed');
});

await step('answers', async () => {
  writeJSON(answersOut, await answers(su, seed.T));
});
