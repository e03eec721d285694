// Dates: every screen shows a date the one way the API writes it, in UTC
// ("2026-12-02 09:41:25.472Z"), with the local time on hover. dateText and
// localText are pure (no DOM): Node's test runner imports them.

import { h } from './dom.js';

// parseDate returns the milliseconds of an API date ("YYYY-MM-DD
// HH:MM:SS.mmmZ", the T form, or anything Date.parse reads), NaN for
// anything else.
export function parseDate(v) {
  if (v === null || v === undefined || v === '') return NaN;
  if (typeof v === 'number') return v;
  return Date.parse(String(v).trim().replace(' ', 'T'));
}

// dateText writes v (an API date, milliseconds, or a Date) as the API
// does: UTC, "YYYY-MM-DD HH:MM:SS.mmmZ". What is no date is returned as
// text, unchanged ("" for null or undefined).
export function dateText(v) {
  const ms = v instanceof Date ? v.getTime() : parseDate(v);
  if (Number.isNaN(ms)) return v === null || v === undefined ? '' : String(v);
  return new Date(ms).toISOString().replace('T', ' ');
}

// localText writes v in the browser's local time, naming its zone offset
// ("2026-12-02 10:41:25 UTC+1"), "" for what is no date. offsetMinutes
// (east of UTC; the browser's own if not given) is for tests.
export function localText(v, offsetMinutes) {
  const ms = v instanceof Date ? v.getTime() : parseDate(v);
  if (Number.isNaN(ms)) return '';
  const off = offsetMinutes ?? -new Date(ms).getTimezoneOffset();
  const local = new Date(ms + off * 60000).toISOString().slice(0, 19).replace('T', ' ');
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  const zone = off === 0 ? 'UTC' : `UTC${sign}${Math.floor(a / 60)}${a % 60 ? ':' + String(a % 60).padStart(2, '0') : ''}`;
  return `${local} ${zone}`;
}

// dateCell is a time element showing v as dateText, the local time in its
// title (shown on hover) and its machine-readable datetime.
export function dateCell(v) {
  const ms = parseDate(v);
  if (Number.isNaN(ms)) return h('span', null, dateText(v));
  return h('time', { datetime: new Date(ms).toISOString(), title: `Local time: ${localText(ms)}` }, dateText(ms));
}
