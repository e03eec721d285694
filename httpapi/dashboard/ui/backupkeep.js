// The Backups screen's retention and check parts: the daily, weekly and
// monthly keeps and the check's schedule beside "Automatic backups to
// keep" (settings backups.cronKeepDaily, cronKeepWeekly, cronKeepMonthly,
// checkCron), and the last check of the stored archives with a "Check
// now" button (GET and POST /api/backups/check). retentionText,
// checkSummary and badRows are pure (no DOM): Node's test runner imports
// them. Every value from the server is a text node.

import { api } from './api.js';
import { dateCell } from './dates.js';
import { busy, h, message } from './dom.js';
import { field } from './forms.js';

// How often the check's state is asked again while a check runs.
const checkPollMs = 2000;

// plural is "1 day", "7 days".
function plural(n, one) {
  return n === 1 ? `1 ${one}` : `${n} ${one}s`;
}

// retentionText reads the retention of settings b in one sentence: the
// newest cronMaxKeep, plus the newest of each of the last N days, weeks
// and months that have one.
export function retentionText(b) {
  const n = (v) => Math.max(0, Math.trunc(Number(v) || 0));
  const last = n(b && b.cronMaxKeep);
  const extra = [
    [n(b && b.cronKeepDaily), 'day'],
    [n(b && b.cronKeepWeekly), 'week'],
    [n(b && b.cronKeepMonthly), 'month'],
  ].filter(([c]) => c > 0).map(([c, unit]) => `the newest of each of the last ${plural(c, unit)}`);
  if (last === 0 && extra.length === 0) return 'Keeps every automatic backup.';
  const parts = last > 0 ? [`the newest ${last}`, ...extra] : extra;
  const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}` : parts[0];
  return `Keeps ${list} (days, ISO weeks and months in UTC; manual and uploaded backups are never deleted).`;
}

// keepFields returns the inputs of the keeps and of the check's schedule
// for settings b: {fields, rows, values()}, values() being their part of
// the PATCH body.
export function keepFields(b) {
  const num = (name, label) => {
    const f = field(`backups.${name}`, label, {
      type: 'number', attrs: { min: '0', step: '1', inputmode: 'numeric' },
      after: h('p', { class: 'hint' }, `${name}; 0 = not used`),
    });
    f.input.value = String((b && b[name]) ?? 0);
    return f;
  };
  const daily = num('cronKeepDaily', 'Also keep one a day, for this many days');
  const weekly = num('cronKeepWeekly', 'One a week, for this many weeks');
  const monthly = num('cronKeepMonthly', 'One a month, for this many months');
  const check = field('backups.checkCron', 'Check the stored archives (cron)', {
    attrs: { autocomplete: 'off', spellcheck: 'false' },
    after: h('p', { class: 'hint' }, 'checkCron; reads every archive again and verifies it; empty = never'),
  });
  check.input.value = (b && b.checkCron) || '';
  const fields = [daily, weekly, monthly, check];
  return {
    fields,
    rows: fields.map((f) => f.row),
    values: () => ({
      cronKeepDaily: Number(daily.input.value),
      cronKeepWeekly: Number(weekly.input.value),
      cronKeepMonthly: Number(monthly.input.value),
      checkCron: check.input.value.trim(),
    }),
  };
}

// checkSummary reads check state s ({running, last}) as {tone, text}:
// tone 'running', 'none' (no check since the server started), 'bad' (an
// archive failed, or the check did not finish) or 'ok'.
export function checkSummary(s) {
  if (s && s.running) return { tone: 'running', text: 'A check is running…' };
  const l = s && s.last;
  if (!l) return { tone: 'none', text: 'No check since the server started.' };
  const bad = Array.isArray(l.bad) ? l.bad.length : 0;
  const good = Number(l.checked) || 0;
  const of = `${plural(good + bad, 'archive')}`;
  if (l.error) return { tone: 'bad', text: `The last check did not finish: ${l.error}` };
  if (bad > 0) return { tone: 'bad', text: `${bad} of ${of} failed the last check.` };
  return { tone: 'ok', text: `All ${of} passed the last check.` };
}

// badRows returns, for each bad archive of check state s, [key, what]:
// what is "damaged: reason" or "could not be read: reason".
export function badRows(s) {
  const bad = (s && s.last && Array.isArray(s.last.bad)) ? s.last.bad : [];
  return bad.map((b) => [String(b.key || ''), `${b.unread ? 'could not be read' : 'damaged'}: ${String(b.reason || '')}`]);
}

// checkSection is the section of the last check, with "Check now".
export function checkSection() {
  const body = h('div', { 'aria-live': 'polite', id: 'bk-check-state' }, h('p', { class: 'hint' }, 'Loading…'));
  const button = h('button', { type: 'button', class: 'plain', id: 'bk-check-now' }, 'Check now');
  let timer = 0;
  const render = (s) => {
    const sum = checkSummary(s);
    const l = s && s.last;
    const rows = badRows(s);
    body.replaceChildren(...[
      message(sum.tone === 'bad' ? 'alert' : 'status', sum.text),
      l ? h('p', { class: 'hint' }, 'Ended ', dateCell(l.ended), `; ${plural(Number(l.checked) || 0, 'archive')} good`,
        l.gone ? `, ${l.gone} deleted meanwhile` : '', '.') : null,
      rows.length ? h('ul', { class: 'check-bad' }, rows.map(([k, what]) => h('li', null, h('code', null, k), ' ', what))) : null,
    ].filter(Boolean));
    button.disabled = sum.tone === 'running';
    clearTimeout(timer);
    if (sum.tone === 'running') timer = setTimeout(load, checkPollMs);
  };
  const load = () => api('GET', '/api/backups/check').then(render, (err) => body.replaceChildren(message('alert', err.message)));
  button.addEventListener('click', async () => {
    let started = false;
    await busy(button, async () => {
      try {
        await api('POST', '/api/backups/check');
        started = true;
      } catch (err) {
        body.replaceChildren(message('alert', err.message));
      }
    });
    if (started) load();
  });
  load();
  return h('section', { 'aria-labelledby': 'bk-check' },
    h('h2', { id: 'bk-check' }, 'Archive check'),
    h('p', { class: 'hint' }, 'Reads every stored archive again and verifies each file against its manifest, as a restore would.'),
    body, h('div', null, button));
}
