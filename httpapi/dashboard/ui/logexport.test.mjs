// Unit tests of logexport.js's pure parts (node --test): the counts, the
// one-line summary and the rows of GET /api/logs/export's state.
import test from 'node:test';
import assert from 'node:assert/strict';
import { countText, exportRows, exportSummary, logsText, offText } from './logexport.js';

const on = {
  enabled: true, endpoint: 'https://collector:4318/v1/logs', protocol: 'http/protobuf', behind: 0,
  exported: 1234567, failed: 0, lost: 0, lastSuccess: '2026-05-06 07:08:09.123Z', lastError: '', lastErrorAt: '',
};

test('countText groups thousands and reads anything else as 0', () => {
  for (const [n, want] of [[0, '0'], [7, '7'], [999, '999'], [1000, '1,000'], [1234567, '1,234,567'],
    ['42', '42'], [12.7, '12'], [-3, '0'], [null, '0'], [undefined, '0'], ['x', '0'], [Infinity, '0']]) {
    assert.equal(countText(n), want, `countText(${n})`);
  }
  assert.equal(logsText(1), '1 log');
  assert.equal(logsText(0), '0 logs');
  assert.equal(logsText(12000), '12,000 logs');
});

test('exportSummary reads the state in one line', () => {
  for (const [name, s, want] of [
    ['off', { enabled: false }, 'Off'],
    ['no answer', null, 'Off'],
    ['up to date', on, 'Up to date'],
    ['behind', { ...on, behind: 2500 }, 'Catching up: 2,500 logs behind'],
    ['failing after a success', { ...on, behind: 3, lastError: 'connection refused', lastErrorAt: '2026-05-06 07:09:00.000Z' }, 'Failing: 3 logs waiting'],
    ['failing, never a success', { ...on, behind: 1, lastSuccess: '', lastError: '503', lastErrorAt: '2026-05-06 07:09:00.000Z' }, 'Failing: 1 log waiting'],
    ['an old error, then a success', { ...on, lastError: '503', lastErrorAt: '2026-05-06 07:00:00.000Z' }, 'Up to date'],
  ]) {
    assert.equal(exportSummary(s), want, name);
  }
});

test('exportRows: the endpoint as given, the counts, the dates; null when off', () => {
  assert.equal(exportRows({ enabled: false, endpoint: '' }), null);
  assert.equal(exportRows(undefined), null);
  assert.match(offText, /OTEL_EXPORTER_OTLP_LOGS_ENDPOINT/);
  const rows = exportRows({ ...on, failed: 1000, lost: 5, lastError: 'receiver: 400 Bad Request', lastErrorAt: '2026-05-06 07:09:00.000Z' });
  assert.deepEqual(rows.map((r) => r.slice(0, 2)), [
    ['Endpoint', 'https://collector:4318/v1/logs'],
    ['Protocol', 'http/protobuf'],
    ['Logs behind', '0'],
    ['Exported', '1,234,567'],
    ['Failed', '1,000'],
    ['Lost', '5'],
    ['Last success', { date: '2026-05-06 07:08:09.123Z' }],
    ['Last error', { text: 'receiver: 400 Bad Request', date: '2026-05-06 07:09:00.000Z' }],
  ]);
  const none = exportRows({ ...on, lastSuccess: '' });
  assert.deepEqual(none.slice(6).map((r) => r[1]), ['none since the start', 'none']);
});
