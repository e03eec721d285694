// Drives a server through PocketBase's official JavaScript SDK, as an
// application would, and checks what the SDK hands back. TestOfficialJSSDK
// (sdk_test.go) runs it against a throwaway strongbox:
//
//	node check.mjs BASE_URL SUPERUSER_EMAIL SUPERUSER_PASSWORD
//
// with SDK_MODULE the path of the SDK's ES module
// (node_modules/pocketbase/dist/pocketbase.es.mjs). It prints "ok NAME" per
// step and exits 1 at the first step that fails, naming it.
const [base, email, password] = process.argv.slice(2);
const { default: PocketBase, ClientResponseError, getTokenPayload } = await import(process.env.SDK_MODULE);
// Node 18 has File in node:buffer only.
const File = globalThis.File ?? (await import('node:buffer')).File;

const nonce = Math.random().toString(36).slice(2, 10);
let failed = false;

function assert(cond, what) {
  if (!cond) throw new Error(what);
}

async function step(name, fn) {
  if (failed) return;
  try {
    await fn();
    console.log('ok ' + name);
  } catch (e) {
    failed = true;
    const detail = e instanceof ClientResponseError ? `${e.status} ${JSON.stringify(e.response)}` : String(e && e.stack || e);
    console.log(`FAIL ${name}: ${detail}`);
  }
}

// expectError runs fn, which must fail with a ClientResponseError of
// status and message.
async function expectError(fn, status, message) {
  try {
    await fn();
  } catch (e) {
    assert(e instanceof ClientResponseError, `want a ClientResponseError, got ${e}`);
    assert(e.status === status, `want status ${status}, got ${e.status} ${JSON.stringify(e.response)}`);
    assert(message === undefined || e.response.message === message,
      `want message ${JSON.stringify(message)}, got ${JSON.stringify(e.response.message)}`);
    return e;
  }
  throw new Error(`want a ${status} error, got success`);
}

const pb = new PocketBase(base);
pb.autoCancellation(false);

await step('health', async () => {
  const h = await pb.health.check();
  assert(h.code === 200, `health code ${h.code}`);
});

await step('superuser password sign-in', async () => {
  const r = await pb.collection('_superusers').authWithPassword(email, password);
  assert(pb.authStore.isValid && pb.authStore.isSuperuser, 'the auth store holds no valid superuser');
  assert(r.record.email === email, `record.email ${r.record.email}`);
});

await step('superuser refresh', async () => {
  const before = pb.authStore.token;
  const r = await pb.collection('_superusers').authRefresh();
  assert(r.token && pb.authStore.token === r.token, 'no token after refresh');
  assert(before.split('.').length === 3, 'the token is no JWT');
});

await step('auth methods', async () => {
  const m = await pb.collection('users').listAuthMethods();
  assert(m.password.enabled === true, 'password.enabled');
  assert(m.oauth2.enabled === false && Array.isArray(m.oauth2.providers), 'oauth2');
  assert(m.mfa.enabled === false && m.otp.enabled === false, 'mfa, otp');
  assert(m.password.identityFields.includes('email'), 'identityFields');
});

const userEmail = `sdk-${nonce}@example.com`;
const userPassword = 'Sdk-' + nonce + '-pw';
let userId;
await step('sign-up', async () => {
  const r = await new PocketBase(base).collection('users').create({ email: userEmail, password: userPassword, passwordConfirm: userPassword, name: 'SDK' });
  assert(/^[a-z0-9]{15}$/.test(r.id), `id ${r.id}`);
  assert(r.collectionName === 'users' && r.name === 'SDK' && r.verified === false, JSON.stringify(r));
  assert(r.email === undefined, 'the email of a record with emailVisibility false is shown to a guest');
  userId = r.id;
});

await step('sign-up refused', async () => {
  const e = await expectError(() => new PocketBase(base).collection('users').create({ email: userEmail, password: 'x', passwordConfirm: 'y' }), 400, 'Failed to create record.');
  assert(e.response.data.passwordConfirm.code === 'validation_values_mismatch', JSON.stringify(e.response.data));
});

const user = new PocketBase(base);
user.autoCancellation(false);
await step('user password sign-in and refresh', async () => {
  const r = await user.collection('users').authWithPassword(userEmail, userPassword);
  assert(r.record.id === userId && user.authStore.record.email === userEmail, 'wrong record');
  assert(!user.authStore.isSuperuser, 'a user is taken for a superuser');
  const rr = await user.collection('users').authRefresh();
  assert(rr.record.id === userId, 'refresh: wrong record');
});

await step('wrong password', async () => {
  await expectError(() => new PocketBase(base).collection('users').authWithPassword(userEmail, 'wrong-' + nonce), 400);
});

await step('impersonate', async () => {
  const client = await pb.collection('users').impersonate(userId, 3600);
  assert(client.authStore.record.id === userId, 'impersonated record');
  const claims = getTokenPayload(client.authStore.token);
  const left = claims.exp - Date.now() / 1000;
  assert(left > 3500 && left <= 3601, `token lasts ${left} s, want 3600`);
  const me = await client.collection('users').getOne(userId);
  assert(me.email === userEmail, 'the impersonation token does not read the record as its owner');
});

await step('user refused logs and backups', async () => {
  await expectError(() => user.logs.getList(1, 1), 403, 'The authorized record is not allowed to perform this action.');
  await expectError(() => user.backups.getFullList(), 403, 'Only superusers can perform this action.');
  await expectError(() => new PocketBase(base).logs.getList(1, 1), 401, 'The request requires valid record authorization token.');
});

await step('records list and view', async () => {
  const list = await pb.collection('users').getList(1, 5, { filter: `email = "${userEmail}"` });
  assert(list.totalItems === 1 && list.items[0].id === userId, JSON.stringify(list));
  const first = await pb.collection('users').getFirstListItem(`email = "${userEmail}"`);
  assert(first.id === userId, 'getFirstListItem');
  const all = await pb.collection('users').getFullList({ batch: 1 });
  assert(all.some((r) => r.id === userId), 'getFullList');
  const updated = await pb.collection('users').update(userId, { name: 'SDK 2' });
  assert(updated.name === 'SDK 2', 'update');
});

await step('logs list, view and stats', async () => {
  const filter = 'data.url ~ "/api/health"';
  let list;
  for (let i = 0; i < 50; i++) { // the health check may take a moment to show
    list = await pb.logs.getList(1, 5, { filter, sort: '-created' });
    if (list.items.length > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert(list.items.length > 0 && list.page === 1 && list.perPage === 5, JSON.stringify(list));
  const entry = await pb.logs.getOne(list.items[0].id);
  assert(entry.id === list.items[0].id && entry.data.method === 'GET' && entry.level === 0, JSON.stringify(entry));
  const stats = await pb.logs.getStats({ filter });
  assert(Array.isArray(stats) && stats.length > 0 && stats.every((s) => typeof s.total === 'number' && typeof s.date === 'string'), JSON.stringify(stats));
  await expectError(() => pb.logs.getList(1, 1, { filter: 'status===' }), 400, 'Something went wrong while processing your request. Invalid filter.');
  await expectError(() => pb.logs.getOne('nosuchlog' + nonce), 404, "The requested resource wasn't found.");
});

const key = `sdk_${nonce}.zip`;
const copy = `sdk_${nonce}_copy.zip`;
await step('backups create, list, download, upload, delete', async () => {
  assert(await pb.backups.create(key) === true, 'create');
  const listed = (await pb.backups.getFullList()).find((b) => b.key === key);
  assert(listed && listed.size > 0 && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(listed.modified), JSON.stringify(listed));
  const token = await pb.files.getToken();
  const res = await fetch(pb.backups.getDownloadURL(token, key));
  const zip = new Uint8Array(await res.arrayBuffer());
  assert(res.status === 200 && zip.length === listed.size && zip[0] === 0x50 && zip[1] === 0x4b, `download ${res.status}, ${zip.length} bytes`);
  assert(await pb.backups.upload({ file: new File([zip], copy, { type: 'application/zip' }) }) === true, 'upload');
  const up = (await pb.backups.getFullList()).find((b) => b.key === copy);
  assert(up && up.size === listed.size, 'the uploaded copy is not listed with its size');
  await expectError(() => pb.backups.upload({ file: new File([new Uint8Array([1, 2, 3])], `sdk_${nonce}_bad.zip`) }), 400, 'Something went wrong while processing your request.');
  assert(await pb.backups.delete(key) === true && await pb.backups.delete(copy) === true, 'delete');
  await expectError(() => pb.backups.delete(key), 400);
  await expectError(() => pb.backups.restore(key), 400);
});

await step('account mails', async () => {
  assert(await user.collection('users').requestVerification(userEmail) === true, 'requestVerification');
  assert(await user.collection('users').requestPasswordReset(userEmail) === true, 'requestPasswordReset');
  assert(await user.collection('users').requestEmailChange(`new-${nonce}@example.com`) === true, 'requestEmailChange');
});

await step('rule-filtered list', async () => {
  const before = await pb.collections.getOne('users');
  await pb.collections.update('users', { listRule: 'name = "SDK 2" && @request.headers.x_sdk_check = "yes"' });
  try {
    const guest = new PocketBase(base);
    const seen = await guest.collection('users').getList(1, 5, { headers: { 'X-SDK-Check': 'yes' } });
    assert(seen.items.some((r) => r.id === userId), `the rule hides the matching record: ${JSON.stringify(seen)}`);
    const hidden = await guest.collection('users').getList(1, 5);
    assert(hidden.totalItems === 0, `the rule lets a request without the header see ${hidden.totalItems} records`);
    await expectError(() => guest.collection('users').getOne(userId), 404);
  } finally {
    await pb.collections.update('users', { listRule: before.listRule });
  }
});

await step('authRule refusal', async () => {
  const before = await pb.collections.getOne('users');
  await pb.collections.update('users', { authRule: 'verified = true' });
  try {
    await expectError(() => new PocketBase(base).collection('users').authWithPassword(userEmail, userPassword), 403,
      "The request doesn't satisfy the collection requirements to authenticate.");
  } finally {
    await pb.collections.update('users', { authRule: before.authRule });
  }
  const r = await new PocketBase(base).collection('users').authWithPassword(userEmail, userPassword);
  assert(r.record.id === userId, 'sign-in after the authRule is lifted');
});

// totpCode is RFC 6238's code of step for a base32 secret (HMAC-SHA1,
// 6 digits), computed here as an authenticator app would.
async function totpCode(secret, step) {
  const { createHmac } = await import('node:crypto');
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secret) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(step));
  const sum = createHmac('sha1', key).update(msg).digest();
  const off = sum[sum.length - 1] & 0x0f;
  return String((sum.readUInt32BE(off) & 0x7fffffff) % 1000000).padStart(6, '0');
}

await step('totp second factor with pb.send', async () => {
  await pb.collections.update('users', { totp: { enabled: true } });
  try {
    // A fresh token: the authRule change above ended the earlier ones.
    await user.collection('users').authWithPassword(userEmail, userPassword);
    // listAuthMethods asks for ?fields=mfa,otp,password,oauth2 only.
    const m = await user.send('/api/collections/users/auth-methods', {});
    assert(m.totp && m.totp.enabled === true, 'auth-methods totp.enabled');
    const setup = await user.send('/api/collections/users/totp/setup', { method: 'POST' });
    assert(/^[A-Z2-7]{32}$/.test(setup.secret) && setup.uri.startsWith('otpauth://totp/'), JSON.stringify(setup));
    const now = Math.floor(Date.now() / 1000 / 30);
    const confirmed = await user.send('/api/collections/users/totp/confirm', { method: 'POST', body: { code: await totpCode(setup.secret, now) } });
    assert(confirmed.recoveryCodes.length === 10, JSON.stringify(confirmed));
    const client = new PocketBase(base);
    const e = await expectError(() => client.collection('users').authWithPassword(userEmail, userPassword), 401);
    assert(typeof e.response.mfaId === 'string' && e.response.mfaId !== '', JSON.stringify(e.response));
    const r = await client.send('/api/collections/users/auth-with-totp', {
      method: 'POST', query: { mfaId: e.response.mfaId }, body: { code: await totpCode(setup.secret, now + 1) },
    });
    client.authStore.save(r.token, r.record);
    assert(client.authStore.isValid && client.authStore.record.id === userId, 'the auth store after auth-with-totp');
    const rr = await client.collection('users').authRefresh();
    assert(rr.record.id === userId && client.authStore.token === rr.token, 'authRefresh after auth-with-totp');
  } finally {
    await pb.collections.update('users', { totp: { enabled: false } });
  }
});

await step('delete the user', async () => {
  assert(await pb.collection('users').delete(userId) === true, 'delete');
  await expectError(() => pb.collection('users').getOne(userId), 404);
});

process.exit(failed ? 1 : 0);
