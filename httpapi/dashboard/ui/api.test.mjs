// Unit tests of api.js's token payload parsing (node --test).
import test from 'node:test';
import assert from 'node:assert/strict';
import { tokenPayload } from './api.js';

const b64url = (s) => Buffer.from(s, 'utf8').toString('base64url');
const jwt = (payload) => `${b64url('{"alg":"HS256","typ":"JWT"}')}.${typeof payload === 'string' ? payload : b64url(JSON.stringify(payload))}.c2lnbmF0dXJl`;

test('tokenPayload decodes the payload of a JWT', () => {
  for (const tc of [
    { name: 'claims', token: jwt({ collectionId: 'pbc_users', exp: 1700000000 }), want: { collectionId: 'pbc_users', exp: 1700000000 } },
    // "??>" and "~~~" encode to base64url's - and _ (+ and / in base64).
    { name: 'url alphabet', token: jwt({ newEmail: 'a??>@~~~.example' }), want: { newEmail: 'a??>@~~~.example' } },
    { name: 'no padding', token: jwt({ a: 1 }), want: { a: 1 } },
    { name: 'utf-8', token: jwt({ name: 'Zoë 東京' }), want: { name: 'Zoë 東京' } },
  ]) {
    assert.deepEqual(tokenPayload(tc.token), tc.want, `${tc.name}: tokenPayload(${tc.token})`);
  }
});

test('tokenPayload is null for what is not a JWT with an object payload', () => {
  for (const tc of [
    { name: 'undefined', token: undefined },
    { name: 'empty', token: '' },
    { name: 'two parts', token: jwt({ a: 1 }).split('.').slice(0, 2).join('.') },
    { name: 'four parts', token: jwt({ a: 1 }) + '.x' },
    { name: 'empty payload', token: 'a..c' },
    { name: 'base64 not url', token: jwt(Buffer.from('{"a":"??>"}').toString('base64')) },
    { name: 'padded', token: jwt(b64url('{"a":1}') + '=') },
    { name: 'not JSON', token: jwt(b64url('not json')) },
    { name: 'array', token: jwt([1, 2]) },
    { name: 'string', token: jwt(b64url('"s"')) },
    { name: 'null', token: jwt(b64url('null')) },
    { name: 'invalid utf-8', token: jwt(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]).toString('base64url')) },
  ]) {
    assert.equal(tokenPayload(tc.token), null, `${tc.name}: tokenPayload(${tc.token})`);
  }
});
