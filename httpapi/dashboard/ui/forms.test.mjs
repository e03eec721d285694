// Unit tests of forms.js's error mapping (Node's test runner: node --test).
import test from 'node:test';
import assert from 'node:assert/strict';
import { APIError } from './api.js';
import { fieldErrors, placeErrors } from './forms.js';

const fail = (data, message = 'Failed.') => new APIError(400, { message, data });

test('fieldErrors flattens the envelope data into dotted keys, in order', () => {
  for (const tc of [
    { name: 'no data', err: new APIError(400, { message: 'x' }), want: [] },
    { name: 'flat', err: fail({ email: { code: 'c', message: 'Bad email.' }, password: { code: 'c', message: 'Too short.' } }),
      want: [['email', 'Bad email.'], ['password', 'Too short.']] },
    { name: 'nested', err: fail({ smtp: { host: { code: 'c', message: 'Required.' }, port: { code: 'c', message: 'Too big.' } } }),
      want: [['smtp.host', 'Required.'], ['smtp.port', 'Too big.']] },
    { name: 'array index', err: fail({ rateLimits: { rules: [{ label: { code: 'c', message: 'Bad label.' } }] } }),
      want: [['rateLimits.rules.0.label', 'Bad label.']] },
    { name: 'junk left out', err: fail({ a: 'text', b: null, c: 3, d: { message: '' }, e: { message: 5 }, f: { code: 'c', message: 'Kept.' } }),
      want: [['f', 'Kept.']] },
  ]) {
    assert.deepEqual(fieldErrors(tc.err), tc.want, `${tc.name}: fieldErrors(${JSON.stringify(tc.err.data)})`);
  }
});

test('fieldErrors of anything but an APIError is empty', () => {
  for (const err of [new Error('boom'), { data: { email: { message: 'x' } } }, 'text', null, undefined]) {
    assert.deepEqual(fieldErrors(err), [], `fieldErrors(${String(err)})`);
  }
});

test('placeErrors puts each shown key\'s message at its field', () => {
  const err = fail({ meta: { appURL: { code: 'c', message: 'Must be a URL.' } }, email: { code: 'c', message: 'Bad email.' } }, 'Failed to save.');
  const got = placeErrors(err, ['meta.appURL', 'email', 'meta.appName']);
  assert.deepEqual([...got.fields], [['meta.appURL', 'Must be a URL.'], ['email', 'Bad email.']]);
  assert.equal(got.alert, 'Failed to save.');
});

test('placeErrors adds the messages no field shows to the alert, a path named', () => {
  const err = fail({ token: { code: 'c', message: 'Invalid token.' }, smtp: { port: { code: 'c', message: 'Too big.' } },
    password: { code: 'c', message: 'Too short.' } }, 'Failed.');
  const got = placeErrors(err, ['password']);
  assert.deepEqual([...got.fields], [['password', 'Too short.']]);
  assert.equal(got.alert, 'Failed. Invalid token. smtp.port: Too big.');
});

test('placeErrors with rest false leaves them out', () => {
  const err = fail({ token: { code: 'c', message: 'Invalid token.' }, email: { code: 'c', message: 'Bad email.' } }, 'Failed.');
  const got = placeErrors(err, ['email'], { rest: false });
  assert.deepEqual([...got.fields], [['email', 'Bad email.']]);
  assert.equal(got.alert, 'Failed.');
});

test('placeErrors of another error alerts its message', () => {
  for (const tc of [
    { err: new TypeError('x is not a function'), want: 'x is not a function' },
    { err: 'plain text', want: 'plain text' },
    { err: new APIError(0, null), want: 'The request failed (no answer).' },
  ]) {
    const got = placeErrors(tc.err, ['email']);
    assert.equal(got.alert, tc.want, `placeErrors(${String(tc.err)}).alert`);
    assert.equal(got.fields.size, 0);
  }
});
