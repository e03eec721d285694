// Gives a running PocketBase v0.31.0 the data TestImportPocketBase
// (import_pocketbase_test.go) imports, through the official JS SDK, and
// records PocketBase's answers the imported strongbox must repeat:
//
//	IMPORT_PLAN=plan.json SDK_MODULE=…/pocketbase.es.mjs node seed.mjs BASE_URL
//
// Settings (SMTP at the test's SMTP sink), the users collection with extra
// fields and the test's OAuth2 provider, a second auth collection with MFA,
// a base collection, accounts (one linked through the provider's code flow,
// one signed in with MFA and a mailed OTP), a few thousand requests, then
// the settings, logs and stats answers bounded by the time T of a marker
// request. It writes the record ids, PocketBase-issued tokens, T and the
// answers to plan.seedOut, prints "ok NAME" per step and exits 1 at the
// first failure. backup.mjs then makes the backup archive.
import { plan, step, superusers, assert, client, writeJSON, signInMFA, signInOAuth2, answers } from './lib.mjs';

const base = process.argv[2];
const out = { ids: {} };
const acc = plan.accounts;

let su;
await step('superusers sign in', async () => {
  su = await superusers(base);
  out.superuserToken = su.authStore.token;
});

await step('settings', async () => {
  const s = await su.settings.getAll();
  const rules = s.rateLimits.rules.map((r) => r.label === '/api/' ? { ...r, maxRequests: 500 } : r);
  rules.push({ label: '/api/health', audience: '@guest', duration: 60, maxRequests: 100000 });
  await su.settings.update({
    meta: { appName: 'Imported ' + plan.nonce, appURL: 'https://import.example.com', senderName: 'Importer',
      senderAddress: 'importer@example.com', hideControls: true },
    smtp: { enabled: true, host: plan.smtp.host, port: plan.smtp.port, username: plan.smtp.username, password: plan.smtp.password,
      authMethod: 'PLAIN', tls: false, localName: 'import.test' },
    logs: { maxDays: 14, minLevel: 0, logIP: false, logAuthId: true },
    rateLimits: { enabled: false, rules },
    batch: { enabled: true, maxRequests: 20, timeout: 5, maxBodySize: 1048576 },
    backups: { cron: '0 3 * * *', cronMaxKeep: 5 },
    trustedProxy: { headers: ['X-Forwarded-For'], useLeftmostIP: true },
  });
});

await step('collections', async () => {
  const users = await su.collections.getOne('users');
  const fields = users.fields.concat([
    { name: 'bio', type: 'text', max: 500 },
    { name: 'score', type: 'number' },
    { name: 'subscribed', type: 'bool' },
    { name: 'contract', type: 'file', maxSelect: 1, maxSize: 1048576 },
  ]);
  await su.collections.update('users', {
    fields,
    oauth2: { ...users.oauth2, enabled: true, providers: [{
      name: 'oidc', displayName: 'Loopback', clientId: plan.oauth2.clientId, clientSecret: plan.oauth2.clientSecret,
      authURL: plan.oauth2.url + '/authorize', tokenURL: plan.oauth2.url + '/token', userInfoURL: plan.oauth2.url + '/userinfo',
      pkce: true }] },
  });
  await su.collections.create({
    name: 'staff', type: 'auth', listRule: 'id = @request.auth.id', viewRule: 'id = @request.auth.id',
    fields: [{ name: 'department', type: 'text' }],
    passwordAuth: { enabled: true, identityFields: ['email'] },
    mfa: { enabled: true, duration: 900, rule: '' },
    otp: { enabled: true, duration: 300, length: 8 },
  });
  await su.collections.create({ name: 'notes', type: 'base', listRule: '', viewRule: '',
    fields: [{ name: 'title', type: 'text' }] });
  for (const title of ['first', 'second']) await su.collection('notes').create({ title });
});

await step('accounts', async () => {
  for (const [k, a] of Object.entries(acc)) {
    const r = await su.collection(a.collection).create({ email: a.email, password: a.password, passwordConfirm: a.password,
      verified: a.verified, emailVisibility: !!a.emailVisibility, ...a.fields });
    out.ids[k] = r.id;
  }
});

await step('OAuth2 link through the provider', async () => {
  const r = await signInOAuth2(base, acc.oauth.collection);
  assert(r.record.id === out.ids.oauth, `the provider's user resolved to ${r.record.id}, want ${out.ids.oauth}`);
  assert(r.meta.isNew === false, 'isNew');
  const links = await su.collection('_externalAuths').getFullList();
  assert(links.length === 1 && links[0].recordRef === out.ids.oauth && links[0].provider === 'oidc', JSON.stringify(links));
});

await step('MFA sign-in with a mailed OTP', async () => {
  const r = await signInMFA(base, acc.mfa);
  assert(r.record.id === out.ids.mfa, `MFA signed in ${r.record.id}`);
});

await step('password sign-ins and a token', async () => {
  for (const k of ['verified', 'unverified', 'oauth']) {
    const pb = client(base);
    const r = await pb.collection(acc[k].collection).authWithPassword(acc[k].email, acc[k].password);
    assert(r.record.id === out.ids[k], k);
    if (k === 'verified') out.token = r.token;
  }
});

await step(`${plan.requests} requests`, async () => {
  const guest = client(base);
  const user = client(base);
  await user.collection('users').authWithPassword(acc.verified.email, acc.verified.password);
  const kinds = [
    () => guest.health.check(),
    () => guest.collection('users').getList(1, 5),
    () => guest.collection('notes').getList(1, 1, { filter: 'title != ""' }),
    () => guest.collection('nope_' + plan.nonce).getList(1, 1),
    () => guest.logs.getList(1, 1),
    () => user.logs.getList(1, 1),
    () => su.settings.getAll(),
    () => guest.collection('notes').create({ title: 'guest' }),
    () => user.collection('users').update(out.ids.unverified, { bio: 'no' }),
    () => guest.collection('notes').delete('missing' + plan.nonce.slice(0, 8)),
    () => user.collection('users').getOne(out.ids.verified),
    () => guest.collection('users').listAuthMethods(),
    () => su.collection('_superusers').getList(1, 1),
    () => fetch(base + '/api/batch', { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requests: [{ method: 'GET', url: '/api/collections/notes/records' }] }) }),
  ];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < plan.requests; i = next++) {
      // One request in 100 is a failed sign-in (which PocketBase delays).
      const f = i % 100 === 99
        ? () => guest.collection('users').authWithPassword(acc.unverified.email, 'wrong-password')
        : kinds[i % kinds.length];
      await f().catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
});

// The marker request is the last one T covers: once its log is listed,
// PocketBase (which writes logs in batches) has written every log up to T.
await step('marker and T', async () => {
  const marker = 'import-marker-' + plan.nonce;
  await fetch(`${base}/api/health?${marker}=1`);
  for (let i = 0; i < 100 && !out.T; i++) {
    const l = await su.logs.getList(1, 1, { filter: `data.url ~ "${marker}"` });
    if (l.items.length === 1) out.T = l.items[0].created;
    else await new Promise((r) => setTimeout(r, 200));
  }
  assert(out.T, 'the marker request was not logged within 20 s');
});

await step('answers', async () => {
  out.answers = await answers(su, out.T);
  assert(out.answers.logs[0].answer.totalItems > plan.requests, `only ${out.answers.logs[0].answer.totalItems} logs up to T`);
});

if (!process.exitCode) writeJSON(plan.seedOut, out);
