// Unit tests of backups.js's size formatting (node --test).
import test from 'node:test';
import assert from 'node:assert/strict';
import { nameError, namePattern, size } from './backups.js';

test('size writes bytes in words, 1 KB being 1024 bytes', () => {
  for (const [n, want] of [
    [0, '0 bytes'],
    [1, '1 bytes'],
    [1023, '1023 bytes'],
    [1024, '1.0 KB'],
    [1536, '1.5 KB'],
    [10 * 1024 - 1, '10.0 KB'],
    [10 * 1024, '10 KB'],
    [1024 ** 2, '1.0 MB'],
    [5.25 * 1024 ** 3, '5.3 GB'],
    [1024 ** 4, '1.0 TB'],
    [2048 * 1024 ** 4, '2048 TB'],
    ['2048', '2.0 KB'],
  ]) {
    assert.equal(size(n), want, `size(${n})`);
  }
});

test('size of what is no number is 0 bytes', () => {
  for (const n of [undefined, null, 'abc', NaN, {}]) {
    assert.equal(size(n), '0 bytes', `size(${String(n)})`);
  }
});

test('nameError says which backup names are allowed when the server refuses one', () => {
  const err = { data: { name: { code: 'validation_match_invalid', message: 'Must be in a valid format.' } } };
  nameError(err);
  assert.equal(err.data.name.message, `Must be in a valid format. Use ${namePattern}.`);
  assert.match(namePattern, /lowercase letters, digits, _ and -.*\.zip/);
  const taken = { data: { name: { code: 'validation_backup_name_exists', message: 'Already exists.' } } };
  assert.equal(nameError(taken).data.name.message, 'Already exists.');
  assert.doesNotThrow(() => nameError({ data: {} }));
});
