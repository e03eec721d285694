// The Logs screen: a filter box, the hourly chart of GET /api/logs/stats
// (hover or focus a bar for its count, drag or Enter to narrow the time
// range), the list of GET /api/logs with "Load more", a detail panel (also
// opened by the deep link #/logs?logId=ID) and the logs settings. Request
// logs are attacker-controlled: every value is set as text or an
// attribute, never parsed as markup.

import { api, APIError } from './api.js';
import { dateCell, dateText, parseDate } from './dates.js';
import { busy, h, message, notice, stylesheet } from './dom.js';
import { clearErrors, field, showErrors } from './forms.js';
import { logExport } from './logexport.js';

const perPage = 50;
const hourMs = 3600 * 1000;
const minuteMs = 60 * 1000;
// How many logs of a one-hour range the chart counts by minute.
const minuteLogs = 1000;
const minHours = 24;
const svgNS = 'http://www.w3.org/2000/svg';
const superuserPreset = 'data.auth!="_superusers"';
// The level names PocketBase's dashboard shows.
const levels = { '-4': 'DEBUG', 0: 'INFO', 4: 'WARN', 8: 'ERROR' };

// dataKeys are the keys of a request log's data that the list shows as
// columns (Status, Method, URL…): typed bare in an expression, they mean
// data.<key> (the logs have no field of that name).
const dataKeys = new Set(['status', 'method', 'url', 'execTime', 'auth', 'authId', 'userIP', 'remoteIP',
  'referer', 'userAgent', 'type', 'error', 'details']);

// searchFilter turns a bare search term (no operator) into a search of the
// level, the message and the data, as PocketBase's logs box does; an
// expression is kept as it is, but for a bare data key (status >= 400),
// which becomes data.status (see dataFields).
export function searchFilter(term) {
  term = (term || '').trim();
  if (!term) return '';
  for (const op of ['=', '!=', '~', '!~', '>', '>=', '<', '<=']) {
    if (term.includes(op)) return dataFields(term).text;
  }
  const quoted = Number.isNaN(Number(term)) && term !== 'true' && term !== 'false'
    ? `"${term.replace(/^["'`]|["'`]$/g, '').replace(/"/g, '\\"')}"`
    : term;
  return ['level', 'message', 'data'].map((f) => `${f}~${quoted}`).join('||');
}

// dataFields writes data. before each bare data key of expr (an
// identifier outside quotes, not part of a dotted name): {text, at}, at
// the indexes in expr where a prefix went, to map positions back.
export function dataFields(expr) {
  let text = '';
  const at = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i];
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += expr[j] === '\\' ? 2 : 1;
      text += expr.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    const m = /^[A-Za-z_@][\w.@:]*/.exec(expr.slice(i));
    if (m && !/[\w.@]/.test(expr[i - 1] || '')) {
      if (dataKeys.has(m[0])) {
        at.push(i);
        text += 'data.';
      }
      text += m[0];
      i += m[0].length;
      continue;
    }
    text += c;
    i++;
  }
  return { text, at };
}

// byteIndex is the index in str (UTF-16) of the character at byte offset
// n of its UTF-8 form (str.length past the end).
export function byteIndex(str, n) {
  const enc = new TextEncoder();
  let bytes = 0;
  let i = 0;
  for (const ch of str) {
    if (bytes >= n) return i;
    bytes += enc.encode(ch).length;
    i += ch.length;
  }
  return str.length;
}

// filterProblem reads the data.filter of a refused filter (the server's
// {code, message, params: {offset}}, offset a byte of the whole filter
// sent) for the term typed, which starts at byte start of that filter:
// {text, term, caret}, text what is wrong and at which character of the
// term (from 1), caret a line of spaces and a ^ under it (term and caret
// "" when the position is not in the term). It is null when data has no
// filter error.
export function filterProblem(data, term, start) {
  const fe = data && typeof data === 'object' ? data.filter : null;
  if (!fe || typeof fe.message !== 'string' || !fe.message) return null;
  const what = fe.message.replace(/^Invalid filter: /, '').replace(/ \(at offset \d+\)\.?$|\.$/, '');
  const offset = fe.params && Number.isInteger(fe.params.offset) ? fe.params.offset : -1;
  const sent = searchFilter(term);
  const enc = new TextEncoder();
  if (offset < start || offset > start + enc.encode(sent).length || !sent) {
    return { text: `The filter is not valid: ${what}.`, term: '', caret: '' };
  }
  // The index in what was sent, then in what was typed (trimmed, without
  // the data. prefixes dataFields wrote; a bare word has no position).
  const typed = (term || '').trim();
  const { text: expr, at } = dataFields(typed);
  if (expr !== sent) return { text: `The filter is not valid: ${what}.`, term: '', caret: '' };
  let i = byteIndex(sent, offset - start);
  let shift = 0;
  for (const [k, a] of at.entries()) {
    const p = a + 5 * k;
    if (i >= p + 5) shift += 5;
    else if (i > p) shift += i - p;
  }
  i = Math.min(i - shift, typed.length);
  const col = Array.from(typed.slice(0, i)).length;
  const where = i >= typed.length ? 'at the end' : `at character ${col + 1}`;
  return { text: `The filter is not valid ${where}: ${what}.`, term: typed, caret: ' '.repeat(col) + '^' };
}

// composeFilter joins the parts of the filter (the superusers preset, the
// search, the zoom range), each in parentheses: {filter, start}, start the
// byte offset of the search in filter (-1 without one).
export function composeFilter(preset, search, range) {
  let filter = '';
  let start = -1;
  for (const [k, f] of [['preset', preset], ['search', search], ['range', range]]) {
    if (!f) continue;
    if (filter) filter += '&&';
    if (k === 'search') start = new TextEncoder().encode(filter + '(').length;
    filter += `(${f})`;
  }
  return { filter, start };
}

// s creates an SVG element with attributes and children.
function s(tag, attrs, ...children) {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

function levelName(level) {
  return `${levels[level] || 'UNKN'} (${level})`;
}

// slotText is the start of a chart slot as the API writes dates, to the
// minute ("2026-03-02 10:00Z").
function slotText(ms) {
  return dateText(ms).slice(0, 16) + 'Z';
}

function text(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function execTime(v) {
  return typeof v === 'number' ? `${v.toFixed(v < 10 ? 2 : 0)} ms` : '';
}

// logsPage builds the screen and starts its requests (stats, first page,
// settings and a deep-linked log) in parallel.
export function logsPage() {
  stylesheet('logs.css');
  const st = { term: '', superusers: false, zoom: null, gen: 0 };
  const filter = () => composeFilter(st.superusers ? '' : superuserPreset, searchFilter(st.term),
    st.zoom ? `created>="${st.zoom.min}" && created<="${st.zoom.max}"` : '');
  const detail = detailPanel();
  const list = logList((id) => detail.open(id));
  const chart = hourChart((zoom) => {
    st.zoom = zoom;
    reload();
  });
  let alert = null;
  const reload = () => {
    const gen = ++st.gen;
    const { filter: f, start } = filter();
    alert.clear();
    const fail = (err) => {
      if (gen !== st.gen) return;
      // A refused filter: say where, and show no list or chart of the
      // last one.
      const p = err instanceof APIError ? filterProblem(err.data, st.term, start) : null;
      if (p) {
        chart.clear();
        list.clear('No logs: the filter is not valid.');
      }
      alert.show(h('div', { role: 'alert', class: 'filter-problem' }, h('p', null, err.message),
        p ? h('p', null, p.text) : null,
        p && p.term ? h('pre', { class: 'filter-caret', 'aria-hidden': 'true' }, p.term + '\n' + p.caret) : null));
    };
    // Each part is aria-busy until its answer is drawn (or has failed).
    const track = (part, promise) => {
      part.el.setAttribute('aria-busy', 'true');
      return promise.catch(fail).finally(() => {
        if (gen === st.gen) part.el.removeAttribute('aria-busy');
      });
    };
    return Promise.all([track(chart, chart.load(f, () => gen === st.gen, st.zoom)),
      track(list, list.load(f, () => gen === st.gen))]);
  };
  const search = searchForm(st, reload);
  alert = notice(search);
  const node = h('main', { class: 'page logs' },
    h('h1', { tabindex: '-1' }, 'Logs'), search, alert.slot, chart.el, list.el, detail.el, settingsForm());
  reload();
  const id = new URLSearchParams(location.hash.split('?')[1] || '').get('logId');
  if (id) detail.open(id);
  return { title: 'Logs', node };
}

// searchForm is the filter box and the superusers toggle.
function searchForm(st, reload) {
  const input = h('input', {
    id: 'f-filter', name: 'filter', type: 'search', autocomplete: 'off',
    placeholder: 'Search term or filter like level > 0 && data.auth = "guest"',
  });
  const toggle = h('input', { id: 'f-superusers', type: 'checkbox', name: 'superusers' });
  const button = h('button', { type: 'submit' }, 'Search');
  toggle.addEventListener('change', () => {
    st.superusers = toggle.checked;
    reload();
  });
  const form = h('form', { role: 'search', class: 'logs-search' },
    h('div', { class: 'field' }, h('label', { for: 'f-filter' }, 'Filter'),
      h('div', { class: 'row' }, input, button)),
    h('div', { class: 'check' }, toggle, h('label', { for: 'f-superusers' }, 'Include superuser requests')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    st.term = input.value;
    busy(button, reload);
  });
  return form;
}

// hourChart is the hourly bar chart; onZoom(range or null) narrows or
// resets the time range.
function hourChart(onZoom) {
  const W = 1000;
  const H = 160;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', class: 'chart', role: 'group', 'aria-label': 'Logs per hour' });
  const tip = h('p', { class: 'chart-tip', 'aria-live': 'polite' });
  const axis = h('p', { class: 'chart-axis' });
  const reset = h('button', { type: 'button', class: 'plain', disabled: true }, 'Reset');
  reset.addEventListener('click', () => onZoom(null));
  const el = h('section', { class: 'chart-box', 'aria-label': 'Chart' },
    h('div', { class: 'chart-head' }, h('p', { class: 'hint' }, 'Drag over the chart (or press Enter on a bar) to narrow the time range.'), reset),
    svg, axis, tip);
  let view = null; // {t0, bw}
  const show = (bar) => {
    tip.textContent = bar ? bar.getAttribute('aria-label') : '';
  };
  svg.addEventListener('pointerover', (ev) => show(ev.target.closest('rect.bar')));
  svg.addEventListener('focusin', (ev) => show(ev.target.closest('rect.bar')));
  svg.addEventListener('keydown', (ev) => {
    const bar = ev.target.closest('rect.bar');
    if (!bar) return;
    const to = { ArrowRight: bar.nextElementSibling, ArrowLeft: bar.previousElementSibling }[ev.key];
    if (to && to.matches('rect.bar')) {
      ev.preventDefault();
      bar.setAttribute('tabindex', '-1');
      to.setAttribute('tabindex', '0');
      to.focus();
    } else if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      const t = Number(bar.dataset.time);
      onZoom(zoomRange(t, t));
    }
  });
  dragToZoom(svg, W, H, () => view, onZoom);
  // Over one hour, the chart counts the range's logs by minute (the
  // stats are hourly): the newest minuteLogs of them.
  const load = async (filter, current, zoom) => {
    let stats;
    let note = '';
    if (isOneHour(zoom)) {
      const q = new URLSearchParams({ filter, fields: 'created', perPage: minuteLogs, sort: '-rowid' });
      const res = await api('GET', '/api/logs?' + q);
      const items = Array.isArray(res && res.items) ? res.items : [];
      stats = minuteStats(items);
      if (res && res.totalItems > items.length) note = ` (the newest ${items.length} of ${res.totalItems})`;
    } else {
      stats = await api('GET', '/api/logs/stats?' + new URLSearchParams({ filter }));
    }
    if (!current()) return;
    reset.disabled = !zoom;
    svg.setAttribute('aria-label', isOneHour(zoom) ? 'Logs per minute' + note : 'Logs per hour');
    view = drawBars(svg, axis, Array.isArray(stats) ? stats : [], zoom, W, H);
    show(null);
  };
  const clear = () => {
    view = null;
    svg.replaceChildren();
    axis.textContent = '';
    show(null);
  };
  return { el, load, clear };
}

// zoomRange is the created range from the start of hour a to the end of
// hour b (times in ms).
export function zoomRange(a, b) {
  const fmt = (ms) => new Date(ms).toISOString().slice(0, 13).replace('T', ' ');
  return { min: `${fmt(Math.min(a, b))}:00:00.000Z`, max: `${fmt(Math.max(a, b))}:59:59.999Z` };
}

// isOneHour reports whether zoom spans one hour or less: the chart then
// counts the logs by minute.
export function isOneHour(zoom) {
  return !!zoom && parseDate(zoom.max) - parseDate(zoom.min) < hourMs;
}

// minuteStats counts logs (entries with created) by minute, as {date,
// total} oldest first, date the minute's start as the API writes dates.
export function minuteStats(logs) {
  const counts = new Map();
  for (const e of logs) {
    const t = parseDate(e && e.created);
    if (Number.isNaN(t)) continue;
    const m = Math.floor(t / minuteMs) * minuteMs;
    counts.set(m, (counts.get(m) || 0) + 1);
  }
  return [...counts.keys()].sort((a, b) => a - b).map((m) => ({ date: dateText(m), total: counts.get(m) }));
}

// chartBars lays out the bars of stats ({date, total} per slot with logs,
// oldest first: GET /api/logs/stats's hours, or minuteStats's minutes
// when zoom spans one hour) in a chart W wide and H high: the axis spans
// the narrowed range zoom, else at least a day ending at the last hour
// with logs, in slots of an hour (of a minute for one hour); each bar is
// in the slot of its time, as high as its total is against the largest
// (2 at least), with the label of its slot and total. It returns {t0,
// last, max, bw, slot, unit, bars} (t0 and last the first and last slots
// of the axis, in ms; bw a slot's width; slot its length in ms, unit its
// name), or null when no entry has a date.
export function chartBars(stats, zoom, W, H) {
  const points = stats.map((e) => ({ t: parseDate(e.date), n: Number(e.total) || 0 })).filter((p) => !Number.isNaN(p.t));
  if (points.length === 0) return null;
  const byMinute = isOneHour(zoom);
  const slot = byMinute ? minuteMs : hourMs;
  let last = points[points.length - 1].t;
  let t0 = Math.min(points[0].t, last - (minHours - 1) * hourMs);
  if (zoom) {
    t0 = Math.min(points[0].t, parseDate(zoom.min));
    last = Math.max(last, parseDate(zoom.max) - slot + 1);
  }
  const slots = Math.round((last - t0) / slot) + 1;
  const bw = W / slots;
  const max = Math.max(...points.map((p) => p.n));
  const bars = points.map((p) => {
    const height = Math.max(2, (p.n / max) * (H - 4));
    return {
      t: p.t, n: p.n, x: ((p.t - t0) / slot) * bw, y: H - height, width: Math.max(bw * 0.8, 1), height,
      label: `${slotText(p.t)}: ${p.n} ${p.n === 1 ? 'log' : 'logs'}`,
    };
  });
  return { t0, last, max, bw, slot, unit: byMinute ? 'minute' : 'hour', bars };
}

// drawBars draws the bars of chartBars (a <title> and aria-label with
// each one's hour and count) and returns the scale.
function drawBars(svg, axis, stats, zoom, W, H) {
  const c = chartBars(stats, zoom, W, H);
  if (!c) {
    svg.replaceChildren();
    axis.textContent = 'No logs in this range.';
    return null;
  }
  svg.replaceChildren(...c.bars.map((b, i) => s('rect', {
    class: 'bar', x: b.x, y: b.y, width: b.width, height: b.height,
    tabindex: i === 0 ? 0 : -1, role: 'img', 'aria-label': b.label, 'data-time': b.t, 'data-total': b.n,
  }, s('title', null, b.label))));
  axis.replaceChildren(h('span', null, slotText(c.t0)), h('span', null, `max ${c.max} per ${c.unit}`), h('span', null, slotText(c.last)));
  return { t0: c.t0, bw: c.bw, slot: c.slot };
}

// dragToZoom narrows the range to the hours a pointer drag covers.
function dragToZoom(svg, W, H, view, onZoom) {
  let start = null;
  let sel = null;
  const x = (ev) => {
    const r = svg.getBoundingClientRect();
    return Math.min(W, Math.max(0, ((ev.clientX - r.left) / r.width) * W));
  };
  svg.addEventListener('pointerdown', (ev) => {
    if (!view() || ev.button !== 0) return;
    start = x(ev);
    sel = s('rect', { class: 'selection', x: start, y: 0, width: 0, height: H });
    svg.append(sel);
    svg.setPointerCapture(ev.pointerId);
  });
  svg.addEventListener('pointermove', (ev) => {
    if (start === null) return;
    const now = x(ev);
    sel.setAttribute('x', Math.min(start, now));
    sel.setAttribute('width', Math.abs(now - start));
  });
  const end = (ev) => {
    if (start === null) return;
    const a = start;
    const b = x(ev);
    start = null;
    sel.remove();
    const v = view();
    if (!v || Math.abs(b - a) < 4) return;
    const hour = (px) => v.t0 + Math.floor(px / v.bw) * v.slot;
    onZoom(zoomRange(hour(Math.min(a, b)), hour(Math.max(a, b))));
  };
  svg.addEventListener('pointerup', end);
  svg.addEventListener('pointercancel', () => {
    start = null;
    if (sel) sel.remove();
  });
}

// logList is the list, newest first, with its total and "Load more";
// onSelect(id) opens a log.
function logList(onSelect) {
  const total = h('p', { class: 'total', 'aria-live': 'polite' });
  const rows = h('ol', { class: 'log-list', 'aria-label': 'Logs, newest first' });
  const more = h('button', { type: 'button', class: 'plain', hidden: true }, 'Load more');
  const head = h('div', { class: 'log-row head', 'aria-hidden': 'true' },
    ['Level', 'Status', 'Method', 'URL or message', 'Time', 'Execution time'].map((t) => h('span', null, t)));
  const el = h('section', { class: 'logs-list', 'aria-label': 'Logs' }, total, head, rows, h('div', null, more));
  let filter = '';
  let page = 1;
  let current = () => true;
  const fetchPage = async () => {
    const q = new URLSearchParams({ page, perPage, sort: '-rowid', filter });
    const res = await api('GET', '/api/logs?' + q);
    if (!current()) return;
    const items = Array.isArray(res && res.items) ? res.items : [];
    rows.append(...items.map((e) => h('li', null, logRow(e, onSelect))));
    total.textContent = `${res.totalItems} ${res.totalItems === 1 ? 'log' : 'logs'}`;
    more.hidden = items.length < perPage || rows.children.length >= res.totalItems;
  };
  more.addEventListener('click', () => busy(more, async () => {
    page++;
    await fetchPage();
  }));
  const load = async (f, isCurrent) => {
    filter = f;
    page = 1;
    current = isCurrent;
    const res = fetchPage();
    rows.replaceChildren();
    total.textContent = 'Loading…';
    more.hidden = true;
    await res;
  };
  const clear = (why) => {
    rows.replaceChildren();
    total.textContent = why;
    more.hidden = true;
  };
  return { el, load, clear };
}

// logRow is a log's row: a button that opens its detail. A request shows
// its status, method and URL; any other event its message and attributes.
function logRow(e, onSelect) {
  const d = e.data && typeof e.data === 'object' ? e.data : {};
  const isRequest = d.type === 'request';
  let what = d.url;
  if (!isRequest) {
    const attrs = Object.entries(d).slice(0, 4).map(([k, v]) => h('span', { class: 'attr' }, `${k}: ${text(v)}`));
    what = [h('span', null, text(e.message)), ...attrs];
  }
  return h('button', { type: 'button', class: `log-row level-${e.level}`, 'data-id': e.id, onclick: () => onSelect(e.id) },
    h('span', { class: 'level' }, levelName(e.level)),
    h('span', null, isRequest ? text(d.status) : ''),
    h('span', null, isRequest ? text(d.method) : ''),
    h('span', { class: 'url' }, what),
    h('span', null, dateCell(e.created)),
    h('span', null, isRequest ? execTime(d.execTime) : ''));
}

// detailPanel is a dialog with every field and data key of a log, as text,
// and "Copy as JSON"; the open log is in the hash (#/logs?logId=ID).
function detailPanel() {
  const title = h('h2', { id: 'log-detail-title', tabindex: '-1' }, 'Log details');
  const body = h('div');
  const note = h('div', { class: 'messages' });
  const copy = h('button', { type: 'button' }, 'Copy as JSON');
  const close = h('button', { type: 'button', class: 'plain' }, 'Close');
  const el = h('dialog', { class: 'log-detail', 'aria-labelledby': 'log-detail-title' },
    title, body, note, h('div', { class: 'actions' }, copy, close));
  let entry = null;
  close.addEventListener('click', () => el.close());
  el.addEventListener('close', () => {
    if (location.hash.includes('logId=')) history.replaceState(null, '', '#/logs');
  });
  copy.addEventListener('click', async () => {
    const ok = await copyText(JSON.stringify(entry, null, 2));
    note.replaceChildren(ok ? message('status', 'Copied.') : message('alert', 'The browser refused to copy.'));
  });
  const open = async (id) => {
    note.replaceChildren();
    body.replaceChildren(h('p', null, 'Loading…'));
    if (!el.open && el.isConnected) el.showModal();
    history.replaceState(null, '', '#/logs?logId=' + encodeURIComponent(id));
    try {
      entry = await api('GET', '/api/logs/' + encodeURIComponent(id));
      body.replaceChildren(fieldsList(entry));
      copy.disabled = false;
    } catch (err) {
      entry = null;
      copy.disabled = true;
      body.replaceChildren(message('alert', err instanceof APIError ? err.message : String(err)));
    }
    if (!el.open && el.isConnected) el.showModal();
    title.focus();
  };
  return { el, open };
}

// fieldsList is a <dl> of the entry's fields then each of its data keys.
function fieldsList(e) {
  const pairs = [['id', e.id], ['created', e.created], ['level', levelName(e.level)], ['message', e.message]];
  const d = e.data && typeof e.data === 'object' ? e.data : {};
  for (const [k, v] of Object.entries(d)) pairs.push([`data.${k}`, k === 'execTime' ? execTime(v) || v : v]);
  return h('dl', { class: 'fields' }, pairs.map(([k, v]) => {
    const t = text(v);
    if (k === 'created' && t !== '') return [h('dt', null, k), h('dd', null, dateCell(v))];
    return [h('dt', null, k), t === '' ? h('dd', { class: 'empty' }, 'N/A') : h('dd', null, t)];
  }));
}

// copyText copies to the clipboard, falling back to a selected textarea
// and the copy command where the Clipboard API is missing or refused.
async function copyText(str) {
  try {
    await navigator.clipboard.writeText(str);
    return true;
  } catch {
    const area = h('textarea', { readonly: true, class: 'offscreen' });
    area.value = str;
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

// settingsForm is the logs settings (GET/PATCH /api/settings, logs) and
// the log export's state (logexport.js).
function settingsForm() {
  const fields = [
    ['maxDays', 'Max days retention', 'number'],
    ['minLevel', 'Min log level', 'number'],
    ['logIP', 'Log the client IP', 'checkbox'],
    ['logAuthId', 'Log the auth id', 'checkbox'],
  ];
  // The envelope nests their errors under logs (data.logs.maxDays).
  const built = fields.map(([name, label, type]) =>
    field(name, label, { type, key: `logs.${name}`, attrs: { step: type === 'number' ? 1 : null } }));
  const inputs = Object.fromEntries(built.map((f) => [f.input.name, f.input]));
  const button = h('button', { type: 'submit' }, 'Save settings');
  const form = h('form', { class: 'logs-settings', novalidate: true });
  const note = notice(form);
  form.append(...built.map((f) => f.row), note.slot, h('div', null, button));
  const el = h('section', { 'aria-labelledby': 'logs-settings-h' }, h('h2', { id: 'logs-settings-h' }, 'Logs settings'), form, logExport());
  const fill = (logs) => {
    for (const [name, , type] of fields) {
      if (type === 'checkbox') inputs[name].checked = !!logs[name];
      else inputs[name].value = logs[name] ?? '';
    }
  };
  api('GET', '/api/settings').then((v) => fill((v && v.logs) || {}))
    .catch((err) => note.show(message('alert', err.message)));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    clearErrors(built);
    const logs = {};
    for (const [name, , type] of fields) logs[name] = type === 'checkbox' ? inputs[name].checked : Number(inputs[name].value);
    await busy(button, async () => {
      try {
        const v = await api('PATCH', '/api/settings', { logs });
        fill((v && v.logs) || logs);
        note.show(message('status', 'Settings saved.'));
      } catch (err) {
        note.show(showErrors(err, built));
      }
    });
  });
  return el;
}
