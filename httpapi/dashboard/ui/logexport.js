// The log export's state, in the logs settings: GET /api/logs/export
// (superusers) gives where the logs go (the endpoint as the server writes
// it, never a header, a password or a query), how far behind the export
// is and what it did since the start. exportRows and exportSummary are
// pure (no DOM): Node's test runner imports them.

import { statePanel } from './statepanel.js';

// offText is the one line shown when the export is off.
export const offText = 'Export is off. Set OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT) ' +
  'and restart to ship every log over OTLP/HTTP to your log engine.';

// countText writes a count with thousands separators ("1,234,567"); what
// is no count is "0".
export function countText(n) {
  const v = Number(n);
  if (!Number.isFinite(v) || v < 0) return '0';
  return String(Math.trunc(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

// logsText is a count of logs: "1 log", "12,000 logs".
export function logsText(n) {
  const c = countText(n);
  return c === '1' ? '1 log' : `${c} logs`;
}

// exportSummary is a one-line reading of state s: off, failing (an error
// after the last success), catching up, or up to date.
export function exportSummary(s) {
  if (!s || !s.enabled) return 'Off';
  const err = Date.parse(String(s.lastErrorAt || '').replace(' ', 'T'));
  const ok = Date.parse(String(s.lastSuccess || '').replace(' ', 'T'));
  if (s.lastError && (Number.isNaN(ok) || err > ok)) return `Failing: ${logsText(s.behind)} waiting`;
  if (Number(s.behind) > 0) return `Catching up: ${logsText(s.behind)} behind`;
  return 'Up to date';
}

// exportRows returns the rows of state s as [label, value, hint]: value is
// text, or {date} for an API date, or {text, date} for the last error;
// null when the export is off.
export function exportRows(s) {
  if (!s || !s.enabled) return null;
  return [
    ['Endpoint', s.endpoint || ''],
    ['Protocol', s.protocol || ''],
    ['Logs behind', countText(s.behind), 'stored, not yet acknowledged by the receiver'],
    ['Exported', countText(s.exported), 'acknowledged since the start'],
    ['Failed', countText(s.failed), 'refused by the receiver (400) and skipped'],
    ['Lost', countText(s.lost), 'deleted by retention before they were exported'],
    ['Last success', s.lastSuccess ? { date: s.lastSuccess } : 'none since the start'],
    ['Last error', s.lastError ? { text: s.lastError, date: s.lastErrorAt } : 'none'],
  ];
}

// logExport returns the section showing the export's state, with a
// Refresh button; it loads it at once.
export function logExport() {
  return statePanel({
    path: '/api/logs/export', title: 'Log export (OTLP)', id: 'log-export-h', level: 'h3',
    cls: { section: 'log-export', body: 'export-state', head: 'export-head', summary: 'export-summary', fields: 'fields', hint: 'export-hint', off: 'export-off' },
    rows: exportRows, summary: exportSummary, offText,
  });
}
