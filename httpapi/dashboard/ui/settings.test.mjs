// Unit tests of settings.js's pure parts (node --test).
import test from 'node:test';
import assert from 'node:assert/strict';
import { testEmailText } from './settings.js';

test('testEmailText tells a mail sent from a mail left in the outbox', () => {
  assert.match(testEmailText(''), /^The test email was sent/);
  const t = testEmailText('1700000000-abc.eml');
  assert.match(t, /^Not sent: SMTP is off/);
  assert.ok(t.includes('mail/1700000000-abc.eml'), t);
  assert.ok(!/was sent/.test(t), t);
});
