// The Logs screen: a filter box, the hourly chart of GET /api/logs/stats
// (hover or focus a bar for its count, drag or Enter to narrow the time
// range), the list of GET /api/logs with "Load more", a detail panel (also
// opened by the deep link #/logs?logId=ID) and the logs settings. Request
// logs are attacker-controlled: every value is set as text or an
// attribute, never parsed as markup.

import { api, APIError } from './api.js';
import { busy, h, message, stylesheet } from './dom.js';
import { clearErrors, field, showErrors } from './forms.js';

const perPage = 50;
const hourMs = 3600 * 1000;
const minHours = 24;
const svgNS = 'http://www.w3.org/2000/svg';
const superuserPreset = 'data.auth!="_superusers"';
// The level names PocketBase's dashboard shows.
const levels = { '-4': 'DEBUG', 0: 'INFO', 4: 'WARN', 8: 'ERROR' };

// searchFilter turns a bare search term (no operator) into a search of the
// level, the message and the data, as PocketBase's logs box does; an
// expression is kept as it is.
export function searchFilter(term) {
  term = (term || '').trim();
  if (!term) return '';
  for (const op of ['=', '!=', '~', '!~', '>', '>=', '<', '<=']) {
    if (term.includes(op)) return term;
  }
  const quoted = Number.isNaN(Number(term)) && term !== 'true' && term !== 'false'
    ? `"${term.replace(/^["'`]|["'`]$/g, '').replace(/"/g, '\\"')}"`
    : term;
  return ['level', 'message', 'data'].map((f) => `${f}~${quoted}`).join('||');
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

function hourText(ms) {
  return new Date(ms).toISOString().slice(0, 13).replace('T', ' ') + ':00 UTC';
}

function parseDate(v) {
  return Date.parse(String(v).replace(' ', 'T'));
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
  const filter = () => [st.superusers ? '' : superuserPreset, searchFilter(st.term),
    st.zoom ? `created>="${st.zoom.min}" && created<="${st.zoom.max}"` : '']
    .filter(Boolean).map((f) => `(${f})`).join('&&');
  const detail = detailPanel();
  const list = logList((id) => detail.open(id));
  const chart = hourChart((zoom) => {
    st.zoom = zoom;
    reload();
  });
  const alert = h('div', { class: 'messages' });
  const reload = () => {
    const gen = ++st.gen;
    const f = filter();
    alert.replaceChildren();
    const fail = (err) => {
      if (gen === st.gen) alert.replaceChildren(message('alert', err.message));
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
  const node = h('main', { class: 'page logs' },
    h('h1', { tabindex: '-1' }, 'Logs'), search, alert, chart.el, list.el, detail.el, settingsForm());
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
  const load = async (filter, current, zoom) => {
    const stats = await api('GET', '/api/logs/stats?' + new URLSearchParams({ filter }));
    if (!current()) return;
    reset.disabled = !zoom;
    view = drawBars(svg, axis, Array.isArray(stats) ? stats : [], zoom, W, H);
    show(null);
  };
  return { el, load };
}

// zoomRange is the created range from the start of hour a to the end of
// hour b (times in ms).
export function zoomRange(a, b) {
  const fmt = (ms) => new Date(ms).toISOString().slice(0, 13).replace('T', ' ');
  return { min: `${fmt(Math.min(a, b))}:00:00.000Z`, max: `${fmt(Math.max(a, b))}:59:59.999Z` };
}

// chartBars lays out the bars of stats (GET /api/logs/stats: {date,
// total} per hour with logs, oldest first) in a chart W wide and H high:
// the axis spans the narrowed range zoom, else at least a day ending at
// the last hour with logs, in slots of an hour; each bar is in the slot of
// its hour, as high as its total is against the largest (2 at least), with
// the label of its hour and total. It returns {t0, last, max, bw, bars}
// (t0 and last the first and last hours of the axis, in ms; bw a slot's
// width), or null when no entry has a date.
export function chartBars(stats, zoom, W, H) {
  const points = stats.map((e) => ({ t: parseDate(e.date), n: Number(e.total) || 0 })).filter((p) => !Number.isNaN(p.t));
  if (points.length === 0) return null;
  let last = points[points.length - 1].t;
  let t0 = Math.min(points[0].t, last - (minHours - 1) * hourMs);
  if (zoom) {
    t0 = Math.min(points[0].t, parseDate(zoom.min));
    last = Math.max(last, parseDate(zoom.max) - hourMs + 1);
  }
  const hours = Math.round((last - t0) / hourMs) + 1;
  const bw = W / hours;
  const max = Math.max(...points.map((p) => p.n));
  const bars = points.map((p) => {
    const height = Math.max(2, (p.n / max) * (H - 4));
    return {
      t: p.t, n: p.n, x: ((p.t - t0) / hourMs) * bw, y: H - height, width: Math.max(bw * 0.8, 1), height,
      label: `${hourText(p.t)}: ${p.n} ${p.n === 1 ? 'log' : 'logs'}`,
    };
  });
  return { t0, last, max, bw, bars };
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
  axis.replaceChildren(h('span', null, hourText(c.t0)), h('span', null, `max ${c.max} per hour`), h('span', null, hourText(c.last)));
  return { t0: c.t0, bw: c.bw };
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
    const hour = (px) => v.t0 + Math.floor(px / v.bw) * hourMs;
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
  return { el, load };
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
    h('span', null, text(e.created)),
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

// settingsForm is the logs settings (GET/PATCH /api/settings, logs).
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
  const slot = h('div', { class: 'messages' });
  const form = h('form', { class: 'logs-settings', novalidate: true }, built.map((f) => f.row), slot, h('div', null, button));
  const el = h('section', { 'aria-labelledby': 'logs-settings-h' }, h('h2', { id: 'logs-settings-h' }, 'Logs settings'), form);
  const fill = (logs) => {
    for (const [name, , type] of fields) {
      if (type === 'checkbox') inputs[name].checked = !!logs[name];
      else inputs[name].value = logs[name] ?? '';
    }
  };
  api('GET', '/api/settings').then((v) => fill((v && v.logs) || {}))
    .catch((err) => slot.replaceChildren(message('alert', err.message)));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    slot.replaceChildren();
    clearErrors(built);
    const logs = {};
    for (const [name, , type] of fields) logs[name] = type === 'checkbox' ? inputs[name].checked : Number(inputs[name].value);
    await busy(button, async () => {
      try {
        const v = await api('PATCH', '/api/settings', { logs });
        fill((v && v.logs) || logs);
        slot.replaceChildren(message('status', 'Settings saved.'));
      } catch (err) {
        slot.replaceChildren(showErrors(err, built));
      }
    });
  });
  return el;
}
