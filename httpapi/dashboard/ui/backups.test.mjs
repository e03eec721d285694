// Unit tests of backups.js's size formatting (node --test).
import test from 'node:test';
import assert from 'node:assert/strict';
import { size } from './backups.js';

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
