// Unit tests of dates.js (node --test).
import test from 'node:test';
import assert from 'node:assert/strict';
import { dateText, localText, parseDate } from './dates.js';

test('dateText writes every form of a date as the API does, in UTC', () => {
  for (const [v, want] of [
    ['2026-12-02 09:41:25.472Z', '2026-12-02 09:41:25.472Z'],
    ['2026-12-02T09:41:25Z', '2026-12-02 09:41:25.000Z'],
    ['2026-12-02 10:41:25.472+01:00', '2026-12-02 09:41:25.472Z'],
    [Date.UTC(2022, 4, 1, 10), '2022-05-01 10:00:00.000Z'],
    [new Date(Date.UTC(2022, 4, 1, 10)), '2022-05-01 10:00:00.000Z'],
    ['not a date', 'not a date'],
    ['', ''],
    [null, ''],
    [undefined, ''],
  ]) {
    assert.equal(dateText(v), want, `dateText(${String(v)})`);
  }
});

test('localText names the zone offset, and is empty for what is no date', () => {
  const v = '2026-12-02 09:41:25.472Z';
  assert.equal(localText(v, 0), '2026-12-02 09:41:25 UTC');
  assert.equal(localText(v, 60), '2026-12-02 10:41:25 UTC+1');
  assert.equal(localText(v, 330), '2026-12-02 15:11:25 UTC+5:30');
  assert.equal(localText(v, -600), '2026-12-01 23:41:25 UTC-10');
  assert.equal(localText('nope', 0), '');
  assert.ok(Number.isNaN(parseDate(null)));
});
