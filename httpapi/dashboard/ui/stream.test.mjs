// Unit tests of stream.js's pure parts (node --test): the lag and byte
// texts, the one-line summary and the rows of GET /api/backups/stream.
import test from 'node:test';
import assert from 'node:assert/strict';
import { bytesText, lagText, offText, streamRows, streamSummary } from './stream.js';

const on = {
  enabled: true, generation: '0193aabbccdd0001', lastShipped: '2026-05-06 07:08:09.123Z', lagMs: 0, behind: 0,
  restorableFrom: '2026-05-01 00:00:00.000Z', restorableTo: '2026-05-06 07:08:09.123Z', lastError: '', lastErrorAt: '',
  objects: 42, bytes: 1500000,
};

test('lagText and bytesText read anything that is no number as zero', () => {
  for (const [ms, want] of [[0, '0 s'], [-1, '0 s'], [null, '0 s'], ['x', '0 s'], [400, '0.4 s'], [9999, '10.0 s'],
    [12000, '12 s'], [180000, '3 min']]) {
    assert.equal(lagText(ms), want, `lagText(${ms})`);
  }
  for (const [n, want] of [[0, '0 B'], [512, '512 B'], [1500, '1.5 KB'], [1500000, '1.5 MB'], [-5, '0 B'], [undefined, '0 B']]) {
    assert.equal(bytesText(n), want, `bytesText(${n})`);
  }
});

test('streamSummary reads the state in one line', () => {
  for (const [name, s, want] of [
    ['off', { enabled: false }, 'Off'],
    ['no answer', null, 'Off'],
    ['up to date', on, 'Up to date'],
    ['starting', { ...on, lastShipped: '' }, 'Starting: shipping the first snapshot'],
    ['behind', { ...on, lagMs: 1200 }, 'Shipping: 1.2 s behind'],
    ['failing', { ...on, lagMs: 65000, lastError: 'connection refused', lastErrorAt: '2026-05-06 07:09:00.000Z' }, 'Failing: 65 s behind'],
    ['failing from the start', { ...on, lastShipped: '', lastError: '503', lastErrorAt: '2026-05-06 07:09:00.000Z' }, 'Failing: nothing shipped yet'],
    ['an old error, then a shipment', { ...on, lastError: '503', lastErrorAt: '2026-05-06 07:00:00.000Z' }, 'Up to date'],
  ]) {
    assert.equal(streamSummary(s), want, name);
  }
});

test('streamRows: dates, lag, range and error; null when off', () => {
  assert.equal(streamRows({ enabled: false }), null);
  assert.equal(streamRows(undefined), null);
  assert.match(offText, /strongbox restore/);
  const rows = streamRows({ ...on, lagMs: 300, lastError: 'stream: ship: 503', lastErrorAt: '2026-05-06 07:09:00.000Z' });
  assert.deepEqual(rows.map((r) => r.slice(0, 2)), [
    ['Last shipped', { date: '2026-05-06 07:08:09.123Z' }],
    ['Lag', '0.3 s'],
    ['Restorable from', { date: '2026-05-01 00:00:00.000Z' }],
    ['Restorable to', { date: '2026-05-06 07:08:09.123Z' }],
    ['Shipped', '1.5 MB in 42 objects'],
    ['Last error', { text: 'stream: ship: 503', date: '2026-05-06 07:09:00.000Z' }],
  ]);
  assert.deepEqual(streamRows({ enabled: true }).map((r) => r[1]),
    ['not yet', '0 s', 'not yet', 'not yet', '0 B in 0 objects', 'none']);
});
