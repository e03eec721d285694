// The continuous backup's state, on the backups screen: GET
// /api/backups/stream (superusers) tells the last change shipped to the
// bucket, how long the oldest unshipped change has waited, the range a
// restore can reach and the last error. streamRows and streamSummary are
// pure (no DOM): Node's test runner imports them.

import { statePanel } from './statepanel.js';

// offText is the one line shown when continuous backup is off.
export const offText = 'Continuous backup is off. Enable S3 storage and continuous backup below to ship every ' +
  'change to the bucket within a second, and restore any instant with strongbox restore.';

// lagText writes a wait in ms as "0.4 s", "12 s", "3 min".
export function lagText(ms) {
  const v = Number(ms);
  if (!Number.isFinite(v) || v <= 0) return '0 s';
  if (v < 10000) return `${(v / 1000).toFixed(1)} s`;
  if (v < 120000) return `${Math.round(v / 1000)} s`;
  return `${Math.round(v / 60000)} min`;
}

// bytesText writes a byte count: "512 B", "1.5 MB".
export function bytesText(n) {
  const v = Number(n);
  if (!Number.isFinite(v) || v < 0) return '0 B';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let x = v;
  while (x >= 1000 && i < units.length - 1) { x /= 1000; i++; }
  return i === 0 ? `${Math.trunc(x)} B` : `${x.toFixed(1)} ${units[i]}`;
}

// streamSummary is a one-line reading of state s: off, waiting for its
// first base, failing (an error after the last shipment), behind, or up
// to date.
export function streamSummary(s) {
  if (!s || !s.enabled) return 'Off';
  const err = Date.parse(String(s.lastErrorAt || '').replace(' ', 'T'));
  const ok = Date.parse(String(s.lastShipped || '').replace(' ', 'T'));
  if (s.lastError && (Number.isNaN(ok) || err > ok)) {
    return Number.isNaN(ok) ? 'Failing: nothing shipped yet' : `Failing: ${lagText(s.lagMs)} behind`;
  }
  if (Number.isNaN(ok)) return 'Starting: shipping the first snapshot';
  if (Number(s.lagMs) > 0) return `Shipping: ${lagText(s.lagMs)} behind`;
  return 'Up to date';
}

// streamRows returns the rows of state s as [label, value, hint]: value
// is text, or {date}, or {text, date} for the last error; null when off.
export function streamRows(s) {
  if (!s || !s.enabled) return null;
  return [
    ['Last shipped', s.lastShipped ? { date: s.lastShipped } : 'not yet'],
    ['Lag', lagText(s.lagMs), 'how long the oldest change not yet in the bucket has waited'],
    ['Restorable from', s.restorableFrom ? { date: s.restorableFrom } : 'not yet'],
    ['Restorable to', s.restorableTo ? { date: s.restorableTo } : 'not yet'],
    ['Shipped', `${bytesText(s.bytes)} in ${Number(s.objects) || 0} objects`, 'since the server started'],
    ['Last error', s.lastError ? { text: s.lastError, date: s.lastErrorAt } : 'none'],
  ];
}

// streamSection returns the section showing the state, with a Refresh
// button; it loads it at once.
export function streamSection() {
  return statePanel({
    path: '/api/backups/stream', title: 'Continuous backup', id: 'bk-stream', level: 'h2',
    cls: { section: 'stream', body: 'stream-state', head: 'stream-head', summary: 'stream-summary', fields: 'stream-fields', hint: 'stream-hint', off: 'hint' },
    rows: streamRows, summary: streamSummary, offText,
  });
}
