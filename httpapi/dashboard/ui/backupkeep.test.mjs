// Unit tests of backupkeep.js's pure helpers (node --test).
import test from 'node:test';
import assert from 'node:assert/strict';
import { badRows, checkSummary, retentionText } from './backupkeep.js';

test('retentionText reads the retention rule', () => {
  const tail = ' (days, ISO weeks and months in UTC; manual and uploaded backups are never deleted).';
  for (const [b, want] of [
    [{}, 'Keeps every automatic backup.'],
    [{ cronMaxKeep: 0, cronKeepDaily: 0 }, 'Keeps every automatic backup.'],
    [{ cronMaxKeep: 3 }, `Keeps the newest 3${tail}`],
    [{ cronMaxKeep: 3, cronKeepDaily: 7 }, `Keeps the newest 3 and the newest of each of the last 7 days${tail}`],
    [{ cronMaxKeep: 1, cronKeepDaily: 1, cronKeepWeekly: 4, cronKeepMonthly: 12 },
      `Keeps the newest 1, the newest of each of the last 1 day, the newest of each of the last 4 weeks and the newest of each of the last 12 months${tail}`],
    [{ cronMaxKeep: 0, cronKeepMonthly: 2 }, `Keeps the newest of each of the last 2 months${tail}`],
    [{ cronMaxKeep: '5', cronKeepWeekly: -3 }, `Keeps the newest 5${tail}`],
  ]) {
    assert.equal(retentionText(b), want, JSON.stringify(b));
  }
});

test('checkSummary reads the check state', () => {
  for (const [s, tone, text] of [
    [null, 'none', 'No check since the server started.'],
    [{ running: false, last: null }, 'none', 'No check since the server started.'],
    [{ running: true, last: null }, 'running', 'A check is running…'],
    [{ running: false, last: { checked: 1, bad: [] } }, 'ok', 'All 1 archive passed the last check.'],
    [{ running: false, last: { checked: 4, bad: [] } }, 'ok', 'All 4 archives passed the last check.'],
    [{ running: false, last: { checked: 4, bad: [{ key: 'a.zip' }] } }, 'bad', '1 of 5 archives failed the last check.'],
    [{ running: false, last: { checked: 0, bad: [], error: 'list the archives: AccessDenied' } }, 'bad', 'The last check did not finish: list the archives: AccessDenied'],
  ]) {
    assert.deepEqual(checkSummary(s), { tone, text }, JSON.stringify(s));
  }
});

test('badRows names each bad archive and why', () => {
  assert.deepEqual(badRows({ last: { bad: [
    { key: 'a.zip', reason: 'entry "auth.journal": SHA-256 mismatch', unread: false },
    { key: '@auto_b.zip', reason: 'connection reset', unread: true },
  ] } }), [
    ['a.zip', 'damaged: entry "auth.journal": SHA-256 mismatch'],
    ['@auto_b.zip', 'could not be read: connection reset'],
  ]);
  assert.deepEqual(badRows({ last: null }), []);
  assert.deepEqual(badRows(null), []);
});
