// Signs in with a passkey through PocketBase's official JavaScript SDK,
// as an application would: pb.send to strongbox's passkey routes (PocketBase
// has none, so the SDK has no method for them), a software authenticator
// in Node (WebCrypto ECDSA P-256, attestation "none", the WebAuthn Level 3
// JSON forms), pb.authStore.save of the answer, then authRefresh.
// TestOfficialJSSDKPasskey (sdk_test.go) runs it against a throwaway
// strongbox:
//
//	node passkey.mjs BASE_URL SUPERUSER_EMAIL SUPERUSER_PASSWORD
//
// with SDK_MODULE the path of the SDK's ES module. It prints "ok NAME" per
// step and exits 1 at the first step that fails, naming it.
import { webcrypto as crypto } from 'node:crypto';

const [base, email, password] = process.argv.slice(2);
const { default: PocketBase, ClientResponseError } = await import(process.env.SDK_MODULE);

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

const b64u = (b) => Buffer.from(b).toString('base64url');
const fromB64u = (s) => new Uint8Array(Buffer.from(s, 'base64url'));
const sha256 = async (b) => new Uint8Array(await crypto.subtle.digest('SHA-256', b));
const cat = (...parts) => new Uint8Array(parts.flatMap((p) => [...p]));

// cbor encodes ints, strings, byte strings and maps (given as arrays of
// [key, value] pairs), as RFC 8949 does.
function cbor(v) {
  const head = (major, n) => n < 24 ? [major << 5 | n] : n < 256 ? [major << 5 | 24, n] : [major << 5 | 25, n >> 8, n & 255];
  if (typeof v === 'number') return new Uint8Array(v < 0 ? head(1, -1 - v) : head(0, v));
  if (typeof v === 'string') { const b = new TextEncoder().encode(v); return cat(head(3, b.length), b); }
  if (v instanceof Uint8Array) return cat(head(2, v.length), v);
  return cat(head(5, v.length), ...v.flatMap(([k, x]) => [cbor(k), cbor(x)]));
}

// der turns WebCrypto's r‖s signature into the ASN.1 DER form WebAuthn uses.
function der(sig) {
  const int = (b) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    b = b.slice(i);
    return b[0] & 0x80 ? cat([2, b.length + 1, 0], b) : cat([2, b.length], b);
  };
  const body = cat(int(sig.slice(0, 32)), int(sig.slice(32)));
  return cat([0x30, body.length], body);
}

// The software authenticator: one ES256 credential, a counter.
const key = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
const jwk = await crypto.subtle.exportKey('jwk', key.publicKey);
const credId = crypto.getRandomValues(new Uint8Array(32));
let counter = 0;
let rpId = '';
let origin = '';

async function authData(attested) {
  const c = new Uint8Array(4);
  new DataView(c.buffer).setUint32(0, counter);
  const head = cat(await sha256(new TextEncoder().encode(rpId)), [attested ? 0x45 : 0x05], c);
  if (!attested) return head;
  const cose = cbor([[1, 2], [3, -7], [-1, 1], [-2, fromB64u(jwk.x)], [-3, fromB64u(jwk.y)]]);
  return cat(head, new Uint8Array(16), [0, credId.length], credId, cose);
}

const clientData = (type, challenge) => new TextEncoder().encode(JSON.stringify({ type, challenge, origin, crossOrigin: false }));

async function register(publicKey) {
  const cd = clientData('webauthn.create', publicKey.challenge);
  const att = cbor([['fmt', 'none'], ['attStmt', []], ['authData', await authData(true)]]);
  return { id: b64u(credId), rawId: b64u(credId), type: 'public-key', clientExtensionResults: {},
    response: { clientDataJSON: b64u(cd), attestationObject: b64u(att), transports: ['internal'] } };
}

async function assertion(publicKey, userHandle) {
  counter++;
  const cd = clientData('webauthn.get', publicKey.challenge);
  const ad = await authData(false);
  const sig = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key.privateKey, cat(ad, await sha256(cd))));
  return { id: b64u(credId), rawId: b64u(credId), type: 'public-key', clientExtensionResults: {},
    response: { clientDataJSON: b64u(cd), authenticatorData: b64u(ad), signature: b64u(der(sig)), userHandle } };
}

const su = new PocketBase(base);
su.autoCancellation(false);
const user = { email: `passkey-${Math.random().toString(36).slice(2, 10)}@example.com`, password: 'passkey-user-pw-1' };
let userId = '';
const app = new PocketBase(base); // the user's own session
app.autoCancellation(false);

await step('turn passkeys on (app URL at localhost, a domain)', async () => {
  await su.collection('_superusers').authWithPassword(email, password);
  const appURL = 'http://localhost:' + new URL(base).port;
  await su.settings.update({ meta: { appURL } });
  ({ hostname: rpId } = new URL(appURL));
  origin = appURL;
  const users = await su.collections.update('users', { passkey: { enabled: true } });
  assert(users.passkey && users.passkey.enabled === true, `users.passkey ${JSON.stringify(users.passkey)}`);
  const methods = await su.send('/api/collections/users/auth-methods', { method: 'GET' }); // listAuthMethods keeps only the keys it knows
  assert(methods.passkey && methods.passkey.enabled === true, `auth-methods passkey ${JSON.stringify(methods.passkey)}`);
});

await step('register a passkey with pb.send', async () => {
  userId = (await su.collection('users').create({ ...user, passwordConfirm: user.password })).id;
  await app.collection('users').authWithPassword(user.email, user.password);
  const o = await app.send('/api/collections/users/passkeys/register/options', { method: 'POST' });
  assert(o.publicKey.rp.id === rpId && o.publicKey.user.id === b64u(new TextEncoder().encode(userId)), `options ${JSON.stringify(o.publicKey)}`);
  const p = await app.send('/api/collections/users/passkeys/register', {
    method: 'POST', body: { challengeId: o.challengeId, name: 'node', credential: await register(o.publicKey) },
  });
  assert(p.name === 'node' && p.id, `registered ${JSON.stringify(p)}`);
  const list = await app.send('/api/collections/users/passkeys', { method: 'GET' });
  assert(list.length === 1 && list[0].id === p.id, `list ${JSON.stringify(list)}`);
});

const pb = new PocketBase(base); // a new device, signed out
pb.autoCancellation(false);
let sent = null;

await step('sign in usernameless, authStore.save, authRefresh', async () => {
  const o = await pb.send('/api/collections/users/auth-with-passkey/options', { method: 'POST', body: {} });
  assert(o.publicKey.rpId === rpId && o.publicKey.allowCredentials.length === 0, `options ${JSON.stringify(o.publicKey)}`);
  sent = { challengeId: o.challengeId, credential: await assertion(o.publicKey, b64u(new TextEncoder().encode(userId))) };
  const res = await pb.send('/api/collections/users/auth-with-passkey', { method: 'POST', body: sent });
  pb.authStore.save(res.token, res.record);
  assert(pb.authStore.isValid && pb.authStore.record.id === userId, `auth store ${JSON.stringify(pb.authStore.record)}`);
  const r = await pb.collection('users').authRefresh();
  assert(r.record.id === userId && pb.authStore.isValid && r.token, `refresh ${JSON.stringify(r.record)}`);
});

await step('the same answer again is refused', async () => {
  try {
    await new PocketBase(base).send('/api/collections/users/auth-with-passkey', { method: 'POST', body: sent });
  } catch (e) {
    assert(e instanceof ClientResponseError && e.status === 400 && e.response.message === 'Invalid or expired passkey challenge.',
      `replay: ${e.status} ${JSON.stringify(e.response)}`);
    return;
  }
  throw new Error('a replayed sign-in succeeded');
});

process.exit(failed ? 1 : 0);
