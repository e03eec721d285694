import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ceremonyBody, passkeyLine, supported } from './passkey.js';

test('supported needs the JSON parsers and navigator.credentials', () => {
  const parse = () => ({});
  const P = { parseCreationOptionsFromJSON: parse, parseRequestOptionsFromJSON: parse };
  const cases = [
    [{ PublicKeyCredential: P, navigator: { credentials: {} } }, true],
    [{ PublicKeyCredential: { parseCreationOptionsFromJSON: parse }, navigator: { credentials: {} } }, false],
    [{ PublicKeyCredential: P, navigator: {} }, false],
    [{ navigator: { credentials: {} } }, false],
    [null, false],
  ];
  for (const [w, want] of cases) assert.equal(supported(w), want, JSON.stringify(w && Object.keys(w)));
});

test('ceremonyBody carries the challenge, the JSON form and a trimmed name', () => {
  const cred = { id: 'AQ', rawId: 'AQ', type: 'public-key', response: {} };
  assert.deepEqual(ceremonyBody('c1', cred), { challengeId: 'c1', credential: cred });
  assert.deepEqual(ceremonyBody('c1', cred, '  laptop '), { challengeId: 'c1', credential: cred, name: 'laptop' });
  assert.deepEqual(ceremonyBody(undefined, cred, ''), { challengeId: '', credential: cred, name: '' });
});

test('passkeyLine writes the dates as the API does', () => {
  assert.equal(passkeyLine({ created: '2026-11-22 10:00:00.000Z', lastUsed: '' }), 'added 2026-11-22 10:00:00.000Z, never used');
  assert.equal(passkeyLine({ created: '2026-11-22 10:00:00.000Z', lastUsed: '2026-11-23 08:30:00.000Z' }),
    'added 2026-11-22 10:00:00.000Z, last used 2026-11-23 08:30:00.000Z');
});
