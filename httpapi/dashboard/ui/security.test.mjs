// Unit tests of security.js's pure function (Node's test runner).
import test from 'node:test';
import assert from 'node:assert/strict';
import { groups } from './security.js';

test('groups writes a key in groups of four', () => {
  for (const [in_, want] of [['', ''], ['ABC', 'ABC'], ['ABCD', 'ABCD'], ['ABCDE', 'ABCD E'], ['JBSWY3DPEHPK3PXP', 'JBSW Y3DP EHPK 3PXP']]) {
    assert.equal(groups(in_), want, `groups(${in_})`);
  }
});
