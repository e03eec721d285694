// Unit tests of logs.js's pure parts (node --test): the search box's
// filter, the position of a refused filter, and the chart's hourly and
// minute slots.
import test from 'node:test';
import assert from 'node:assert/strict';
import { byteIndex, chartBars, composeFilter, dataFields, filterProblem, isOneHour, minuteStats, searchFilter, zoomRange } from './logs.js';

const hour = 3600 * 1000;

test('searchFilter searches the level, message and data for a bare term', () => {
  for (const [term, want] of [
    ['', ''],
    ['   ', ''],
    [undefined, ''],
    ['timeout', 'level~"timeout"||message~"timeout"||data~"timeout"'],
    ['  timeout  ', 'level~"timeout"||message~"timeout"||data~"timeout"'],
    ['"quoted"', 'level~"quoted"||message~"quoted"||data~"quoted"'],
    ['`back`', 'level~"back"||message~"back"||data~"back"'],
    ['say "hi" now', 'level~"say \\"hi\\" now"||message~"say \\"hi\\" now"||data~"say \\"hi\\" now"'],
    ['404', 'level~404||message~404||data~404'],
    ['true', 'level~true||message~true||data~true'],
  ]) {
    assert.equal(searchFilter(term), want, `searchFilter(${JSON.stringify(term)})`);
  }
});

test('searchFilter keeps an expression as it is', () => {
  for (const term of ['level > 0', 'data.auth = "guest"', 'data.status!=200', 'level>=4 && level<=8', 'a !~ "b"', '@request.status = 1']) {
    assert.equal(searchFilter(term), term, `searchFilter(${JSON.stringify(term)})`);
  }
});

test('searchFilter reads a column name of the list as the data key it is', () => {
  for (const [term, want] of [
    ['status >= 400', 'data.status >= 400'],
    ['  status>=400 && method = "GET" ', 'data.status>=400 && data.method = "GET"'],
    ['url ~ "status" && execTime > 5', 'data.url ~ "status" && data.execTime > 5'],
    ["message = 'url = 1'", "message = 'url = 1'"],
    ['data.status = 1 || status.x = 2 || mystatus = 3', 'data.status = 1 || status.x = 2 || mystatus = 3'],
  ]) {
    assert.equal(searchFilter(term), want, `searchFilter(${JSON.stringify(term)})`);
  }
  assert.deepEqual(dataFields('status > 1 && url ~ "x"').at, [0, 14]);
});

test('byteIndex maps a UTF-8 byte offset to a string index', () => {
  assert.equal(byteIndex('abc', 2), 2);
  assert.equal(byteIndex('é&&', 2), 1); // é is two bytes
  assert.equal(byteIndex('a😀b', 5), 3); // 😀 is 4 bytes, 2 UTF-16 units
  assert.equal(byteIndex('ab', 9), 2);
});

test('filterProblem says at which character of the typed term the filter is wrong', () => {
  const err = (offset, msg = 'expected operand, found end of input') =>
    ({ filter: { code: 'validation_invalid_filter', message: `Invalid filter: ${msg} (at offset ${offset}).`, params: { offset } } });
  const preset = 'data.auth!="_superusers"';
  for (const [name, term, at, want] of [
    ['dangling operator', 'level > ', (f) => f.length - 1,
      { text: 'The filter is not valid at the end: expected operand, found end of input.', term: 'level >', caret: '       ^' }],
    ['unknown field', 'level = 0 && nope = 1', (f, start) => start + 13,
      { text: 'The filter is not valid at character 14: expected operand, found end of input.', term: 'level = 0 && nope = 1', caret: '             ^' }],
    // The data. that searchFilter wrote before status is not counted.
    ['after a data key', 'status >= 400 && ===', (f, start) => start + 'data.status >= 400 && '.length,
      { text: 'The filter is not valid at character 18: expected operand, found end of input.', term: 'status >= 400 && ===', caret: ' '.repeat(17) + '^' }],
    // Offsets count bytes, the caret characters.
    ['after é', 'message = "é" && ?', (f, start) => start + 'message = "é" && '.length + 1,
      { text: 'The filter is not valid at character 18: expected operand, found end of input.', term: 'message = "é" && ?', caret: ' '.repeat(17) + '^' }],
  ]) {
    const { filter, start } = composeFilter(preset, searchFilter(term), '');
    assert.deepEqual(filterProblem(err(at(filter, start)), term, start), want, name);
  }
  // No position in the term: the message only.
  assert.deepEqual(filterProblem(err(0), 'level > ', 29),
    { text: 'The filter is not valid: expected operand, found end of input.', term: '', caret: '' });
  assert.deepEqual(filterProblem({ filter: { message: 'Invalid filter: not a valid expression.' } }, 'x', 1),
    { text: 'The filter is not valid: not a valid expression.', term: '', caret: '' });
  for (const data of [{}, null, { filter: {} }, { name: { message: 'x' } }]) {
    assert.equal(filterProblem(data, 'level >', 1), null, JSON.stringify(data));
  }
});

test('composeFilter puts each part in parentheses and knows where the search starts', () => {
  assert.deepEqual(composeFilter('p', 's', 'r'), { filter: '(p)&&(s)&&(r)', start: 6 });
  assert.deepEqual(composeFilter('', 's', ''), { filter: '(s)', start: 1 });
  assert.deepEqual(composeFilter('é', 's', ''), { filter: '(é)&&(s)', start: 7 });
  assert.deepEqual(composeFilter('p', '', 'r'), { filter: '(p)&&(r)', start: -1 });
});

test('chartBars is null when no entry has a date', () => {
  for (const stats of [[], [{ date: 'not a date', total: 3 }], [{ total: 3 }]]) {
    assert.equal(chartBars(stats, null, 1000, 160), null, `chartBars(${JSON.stringify(stats)})`);
  }
});

test('chartBars spans a day at least, ending at the last hour with logs', () => {
  const c = chartBars([{ date: '2026-03-02 10:00:00.000Z', total: 5 }], null, 960, 160);
  const t = Date.UTC(2026, 2, 2, 10);
  assert.equal(c.last, t);
  assert.equal(c.t0, t - 23 * hour);
  assert.equal(c.bw, 40); // 24 slots in 960
  assert.equal(c.bars.length, 1);
  assert.deepEqual(c.bars[0], { t, n: 5, x: 23 * 40, y: 4, width: 32, height: 156, label: '2026-03-02 10:00Z: 5 logs' });
});

test('chartBars puts each hour in its slot, as high as its share of the largest', () => {
  const stats = [
    { date: '2026-03-01 00:00:00.000Z', total: 40 },
    { date: '2026-03-01 12:00:00.000Z', total: 1 },
    { date: '2026-03-02 23:00:00.000Z', total: 10 },
    { date: 'junk', total: 99 },
  ];
  const c = chartBars(stats, null, 480, 104);
  assert.equal(c.t0, Date.UTC(2026, 2, 1, 0));
  assert.equal(c.bw, 10); // 48 slots in 480
  assert.equal(c.max, 40);
  assert.deepEqual(c.bars.map((b) => [b.x, b.height, b.label]), [
    [0, 100, '2026-03-01 00:00Z: 40 logs'],
    [120, 2.5, '2026-03-01 12:00Z: 1 log'],
    [470, 25, '2026-03-02 23:00Z: 10 logs'],
  ]);
});

test('chartBars gives a bar 2 high at least and 1 wide at least', () => {
  const stats = [{ date: '2026-03-01 00:00:00.000Z', total: 1000 }, { date: '2026-03-09 00:00:00.000Z', total: 1 }];
  const c = chartBars(stats, null, 100, 160);
  assert.equal(c.bars[1].height, 2);
  assert.equal(c.bars[1].width, 1);
});

test('chartBars spans the narrowed range', () => {
  const zoom = zoomRange(Date.UTC(2026, 2, 1, 6), Date.UTC(2026, 2, 1, 9));
  const c = chartBars([{ date: '2026-03-01 07:00:00.000Z', total: 2 }], zoom, 400, 160);
  assert.equal(c.t0, Date.UTC(2026, 2, 1, 6));
  assert.equal(c.last, Date.UTC(2026, 2, 1, 9));
  assert.equal(c.bw, 100);
  assert.equal(c.bars[0].x, 100);
});

test('zoomRange is the created range from the start of one hour to the end of another', () => {
  const a = Date.UTC(2026, 2, 1, 6, 30);
  const b = Date.UTC(2026, 2, 1, 9, 15);
  const want = { min: '2026-03-01 06:00:00.000Z', max: '2026-03-01 09:59:59.999Z' };
  assert.deepEqual(zoomRange(a, b), want);
  assert.deepEqual(zoomRange(b, a), want, 'zoomRange(b, a)');
});

test('minuteStats counts logs by minute, oldest first', () => {
  const logs = [
    { created: '2026-03-01 06:59:59.999Z' }, { created: '2026-03-01 06:05:10.000Z' },
    { created: '2026-03-01 06:05:59.000Z' }, { created: 'junk' }, {}, null,
  ];
  assert.deepEqual(minuteStats(logs), [
    { date: '2026-03-01 06:05:00.000Z', total: 2 },
    { date: '2026-03-01 06:59:00.000Z', total: 1 },
  ]);
});

test('chartBars counts by minute over one hour, the axis its 60 minutes', () => {
  const zoom = zoomRange(Date.UTC(2026, 2, 1, 6), Date.UTC(2026, 2, 1, 6));
  assert.ok(isOneHour(zoom));
  assert.ok(!isOneHour(zoomRange(Date.UTC(2026, 2, 1, 6), Date.UTC(2026, 2, 1, 7))));
  assert.ok(!isOneHour(null));
  const stats = minuteStats([{ created: '2026-03-01 06:05:10.000Z' }, { created: '2026-03-01 06:05:20.000Z' }, { created: '2026-03-01 06:59:00.000Z' }]);
  const c = chartBars(stats, zoom, 600, 104);
  assert.equal(c.unit, 'minute');
  assert.equal(c.t0, Date.UTC(2026, 2, 1, 6, 0));
  assert.equal(c.last, Date.UTC(2026, 2, 1, 6, 59));
  assert.equal(c.bw, 10); // 60 slots in 600
  assert.deepEqual(c.bars.map((b) => [b.x, b.height, b.label]), [
    [50, 100, '2026-03-01 06:05Z: 2 logs'],
    [590, 50, '2026-03-01 06:59Z: 1 log'],
  ]);
  // Several hours stay hourly.
  assert.equal(chartBars([{ date: '2026-03-01 07:00:00.000Z', total: 2 }], zoomRange(Date.UTC(2026, 2, 1, 6), Date.UTC(2026, 2, 1, 9)), 400, 160).unit, 'hour');
});
