// Unit tests of logs.js's pure parts (node --test): the search box's
// filter and the chart's hourly slots.
import test from 'node:test';
import assert from 'node:assert/strict';
import { chartBars, searchFilter, zoomRange } from './logs.js';

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
  for (const term of ['level > 0', 'data.auth = "guest"', 'status!=200', 'url~"/api/"', 'level>=4 && level<=8', 'a !~ "b"']) {
    assert.equal(searchFilter(term), term, `searchFilter(${JSON.stringify(term)})`);
  }
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
  assert.deepEqual(c.bars[0], { t, n: 5, x: 23 * 40, y: 4, width: 32, height: 156, label: '2026-03-02 10:00 UTC: 5 logs' });
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
    [0, 100, '2026-03-01 00:00 UTC: 40 logs'],
    [120, 2.5, '2026-03-01 12:00 UTC: 1 log'],
    [470, 25, '2026-03-02 23:00 UTC: 10 logs'],
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
