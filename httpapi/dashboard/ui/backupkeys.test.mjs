import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';

import { ageKeys, bech32, generate, recipientsOf } from './backupkeys.js';

const hex = (s) => Uint8Array.from(s.match(/../g), (b) => parseInt(b, 16));

test('bech32 matches BIP 173 vectors', () => {
  assert.equal(bech32('a', new Uint8Array()), 'a12uel5l');
  // abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw: the 32 charset values as 20 bytes.
  assert.equal(bech32('abcdef', hex('00443214c74254b635cf84653a56d7c675be77df')), 'abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw');
});

test('ageKeys gives the C2SP test kit key pair as age-keygen prints it', () => {
  const k = ageKeys(hex('ca1626252c53cf1a4dc46695e7fcc46594cb4ccadedb6712dfda0753f3ae355e'),
    hex('36dcec3f5f24739a0c8b36cbb4ffa25729a94a51d41fb205a37419fe7f5adb2a'));
  assert.equal(k.identity, 'AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0');
  assert.equal(k.recipient, 'age1xmwwc06ly3ee5rytxm9mflaz2u56jjj36s0mypdrwsvlul66mv4q47ryef');
});

test('generate makes an identity and recipient of the right shape', async (t) => {
  let k;
  try {
    k = await generate(webcrypto.subtle);
  } catch {
    t.skip('this Node has no WebCrypto X25519');
    return;
  }
  assert.match(k.identity, /^AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}$/);
  assert.match(k.recipient, /^age1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}$/);
  await assert.rejects(generate(null));
});

test('recipientsOf keeps one per line, no blanks', () => {
  assert.deepEqual(recipientsOf(' age1a \n\n age1b\n'), ['age1a', 'age1b']);
  assert.deepEqual(recipientsOf(''), []);
});

test('generate reads the private key from the end of PKCS #8 (RFC 8410)', async () => {
  const key = 'ca1626252c53cf1a4dc46695e7fcc46594cb4ccadedb6712dfda0753f3ae355e';
  const subtle = {
    generateKey: async () => ({ privateKey: 'priv', publicKey: 'pub' }),
    exportKey: async (format, k) => (format === 'pkcs8' && k === 'priv'
      ? hex('302e020100300506032b656e04220420' + key).buffer
      : hex('36dcec3f5f24739a0c8b36cbb4ffa25729a94a51d41fb205a37419fe7f5adb2a').buffer),
  };
  const k = await generate(subtle);
  assert.equal(k.identity, 'AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0');
  // And WebCrypto agrees that this PKCS #8 key has the test kit's public key.
  const priv = await webcrypto.subtle.importKey('pkcs8', hex('302e020100300506032b656e04220420' + key), { name: 'X25519' }, true, ['deriveBits']).catch(() => null);
  if (priv) {
    const jwk = await webcrypto.subtle.exportKey('jwk', priv);
    assert.equal(Buffer.from(jwk.x, 'base64url').toString('hex'), '36dcec3f5f24739a0c8b36cbb4ffa25729a94a51d41fb205a37419fe7f5adb2a');
  }
});
