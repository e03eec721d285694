// The Backups screen (#/settings/backups): the list of archives, newest
// first, with download, restore and delete; create with an optional name;
// upload with a progress bar; and the automatic backups' settings (cron,
// keep N, the S3 bucket) with a connection test, and their encryption
// (backupkeys.js). Everything goes through
// the public JSON API (§4.2, /api/health, /api/settings, /api/files/token);
// every value from data is a text node.

import { api, APIError, apiURL, loadAuth } from './api.js';
import { checkSection, keepFields, retentionText } from './backupkeep.js';
import { encryptionForm } from './backupkeys.js';
import { dateCell } from './dates.js';
import { busy, h, message, notice } from './dom.js';
import { clearErrors, field, showErrors } from './forms.js';
import { streamSection } from './stream.js';

// How often the screen asks /api/health again while a backup or restore
// runs, and how long a restore's restart may take before the screen gives
// up waiting.
const recheckMs = 3000;
const restartPollMs = 1000;
const restartPolls = 180;

const busyReason = 'A backup or restore is running now: a new backup can start once it ends.';

// The rule of a backup's name (PocketBase's ^[a-z0-9_-]+\.zip$).
export const namePattern = 'lowercase letters, digits, _ and - only, ending in .zip (for example my_backup.zip)';

// restoredKey is the sessionStorage key under which a restore leaves the
// name of the backup it restored, for the screen after the reload to say
// it is done.
const restoredKey = 'strongbox-restored';

// Presets of the automatic backups' schedule (backups.cron).
const presets = [
  ['', 'Off'],
  ['0 0 * * *', 'Every day at 00:00'],
  ['0 */6 * * *', 'Every 6 hours'],
  ['0 0 * * 0', 'Every week (Sunday at 00:00)'],
];

export function backups() {
  const note = notice(null);
  const slot = note.slot;
  const show = (node) => (node ? note.show(node) : note.clear());
  const list = h('div', { class: 'backup-list', 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Loading…'));
  const panel = h('div', { class: 'backup-panel' });
  const screen = { slot, show, list, panel, items: [], main: null };
  const create = createForm(screen);
  screen.create = create;
  screen.reload = () => loadList(screen);
  screen.checkHealth = () => checkHealth(screen);
  const main = h('main', { class: 'page backups' },
    h('h1', { tabindex: '-1' }, 'Backups'), slot,
    h('section', { 'aria-labelledby': 'bk-new' }, h('h2', { id: 'bk-new' }, 'New backup'), create.el, uploadForm(screen)),
    h('section', { 'aria-labelledby': 'bk-list' }, h('h2', { id: 'bk-list' }, 'Archives'), panel, list),
    streamSection(), settingsSection(), checkSection());
  screen.main = main;
  // A banner speaks of the last action: any change on the screen clears it.
  main.addEventListener('input', note.clear);
  main.addEventListener('change', note.clear);
  screen.reload();
  screen.checkHealth();
  const restored = takeRestored();
  if (restored) show(message('status', `Backup ${restored} restored: the server restarted with its data.`));
  return { title: 'Backups', node: main };
}

// ---- helpers ----

// size is n bytes in words (1 KB = 1024 bytes).
export function size(n) {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let v = Number(n) || 0;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} bytes` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

// nameError returns err with the field error of a refused name (data.name
// with validation_match_invalid) saying which names are allowed.
export function nameError(err) {
  const e = err && err.data && err.data.name;
  if (e && typeof e === 'object' && e.code === 'validation_match_invalid') {
    err.data.name = { ...e, message: `${e.message || 'Invalid name.'} Use ${namePattern}.` };
  }
  return err;
}

// takeRestored returns (and forgets) the name a restore left before the
// reload, or ''.
function takeRestored() {
  try {
    const key = sessionStorage.getItem(restoredKey) || '';
    sessionStorage.removeItem(restoredKey);
    return key;
  } catch {
    return '';
  }
}

// ---- create and upload ----

function createForm(screen) {
  const name = field('name', 'Name (optional)', {
    attrs: { placeholder: 'my_backup.zip', autocomplete: 'off' },
    after: h('p', { class: 'hint' }, `Empty for a name with the date, or ${namePattern}.`),
  });
  const reason = h('p', { id: 'create-reason', class: 'hint', hidden: true }, busyReason);
  const button = h('button', { type: 'submit', 'aria-describedby': 'create-reason' }, 'Create backup');
  const el = h('form', { novalidate: true, class: 'inline-form' }, name.row, reason, h('div', null, button));
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    clearErrors([name]);
    screen.show(null);
    const v = name.input.value.trim();
    await busy(button, async () => {
      try {
        await api('POST', '/api/backups', v ? { name: v } : {});
        name.input.value = '';
        screen.show(message('status', v ? `Backup ${v} created.` : 'Backup created.'));
      } catch (err) {
        screen.show(showErrors(nameError(err), [name]));
      }
    });
    await screen.reload();
    await screen.checkHealth();
  });
  // setCan enables the button, or disables it saying why.
  const setCan = (can) => {
    reason.hidden = can;
    if (button.getAttribute('aria-busy') !== 'true') button.disabled = !can;
  };
  return { el, setCan };
}

// checkHealth asks /api/health whether a backup can start, and asks again
// while one runs and the screen is shown.
async function checkHealth(screen) {
  let can = true;
  try {
    const res = await api('GET', '/api/health');
    can = !(res && res.data && res.data.canBackup === false);
  } catch {
    can = true; // the create itself says what is wrong
  }
  screen.create.setCan(can);
  if (!can) {
    setTimeout(() => {
      if (screen.main && screen.main.isConnected) checkHealth(screen);
    }, recheckMs);
  }
}

// upload sends file as the multipart field "file" with the superuser's
// token, calling progress(loaded, total) as it goes; it resolves on 204
// and rejects with an APIError.
function upload(file, progress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', apiURL('/api/backups/upload'));
    const auth = loadAuth();
    if (auth) xhr.setRequestHeader('Authorization', auth.token);
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) progress(e.loaded, e.total);
    });
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve();
        return;
      }
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      reject(new APIError(xhr.status, body));
    });
    xhr.addEventListener('error', () => reject(new APIError(0, { message: 'The server cannot be reached.' })));
    const fd = new FormData();
    fd.append('file', file, file.name);
    xhr.send(fd);
  });
}

function uploadForm(screen) {
  const file = field('file', 'Archive to upload (.zip)', { type: 'file', attrs: { accept: '.zip,application/zip' } });
  const bar = h('progress', { id: 'upload-progress', max: '100', value: '0' });
  const pct = h('output', { for: 'upload-progress', class: 'hint' }, '');
  const prog = h('div', { class: 'field upload-progress', hidden: true },
    h('label', { for: 'upload-progress' }, 'Upload progress'), bar, pct);
  const button = h('button', { type: 'submit' }, 'Upload');
  const el = h('form', { novalidate: true, class: 'inline-form' }, file.row, prog, h('div', null, button));
  const set = (p) => {
    bar.value = p;
    pct.textContent = `${Math.floor(p)}%`;
  };
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    clearErrors([file]);
    screen.show(null);
    const f = file.input.files && file.input.files[0];
    if (!f) {
      file.error.textContent = 'Choose a .zip archive first.';
      file.input.setAttribute('aria-invalid', 'true');
      file.input.focus();
      return;
    }
    prog.hidden = false;
    set(0);
    await busy(button, async () => {
      try {
        await upload(f, (loaded, total) => set(total ? (loaded * 100) / total : 0));
        set(100);
        file.input.value = '';
        screen.show(message('status', `Backup ${f.name} uploaded.`));
      } catch (err) {
        screen.show(showErrors(err, [file]));
      } finally {
        prog.hidden = true;
      }
    });
    await screen.reload();
  });
  return el;
}

// ---- the list ----

async function loadList(screen) {
  try {
    const items = await api('GET', '/api/backups');
    screen.items = (Array.isArray(items) ? items : []).slice()
      .sort((a, b) => String(b.modified).localeCompare(String(a.modified)) || String(a.key).localeCompare(String(b.key)));
    screen.list.replaceChildren(table(screen));
  } catch (err) {
    screen.list.replaceChildren(message('alert', err.message));
  } finally {
    screen.list.removeAttribute('aria-busy');
  }
}

function table(screen) {
  if (screen.items.length === 0) return h('p', { class: 'hint' }, 'No backups yet.');
  const rows = screen.items.map((it) => {
    const key = String(it.key);
    const act = (text, fn) => h('button', { type: 'button', class: 'plain', 'aria-label': `${text} ${key}`, onclick: (ev) => fn(screen, key, ev.currentTarget) }, text);
    return h('tr', null,
      h('td', { class: 'backup-name' }, key),
      h('td', null, size(it.size)),
      h('td', null, dateCell(it.modified)),
      h('td', null, h('div', { class: 'backup-actions' }, act('Download', download), act('Restore', askRestore), act('Delete', askDelete))));
  });
  return h('div', { class: 'table-wrap' }, h('table', null,
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Size'),
      h('th', { scope: 'col' }, 'Date'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
    h('tbody', null, rows)));
}

// download gets a file token, then downloads the archive by a link that
// carries it: the superuser's own token never goes in a URL.
async function download(screen, key, button) {
  screen.show(null);
  await busy(button, async () => {
    try {
      const res = await api('POST', '/api/files/token');
      const url = apiURL(`/api/backups/${encodeURIComponent(key)}`);
      url.searchParams.set('token', res && res.token ? res.token : '');
      const a = h('a', { href: url.href, download: key, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
    } catch (err) {
      screen.show(message('alert', err.message));
    }
  });
}

// confirmPanel shows a form in the list's panel: heading, body (with the
// fields, if any), a submit button and Cancel; onSubmit runs with the
// button busy.
function confirmPanel(screen, title, body, submit, onSubmit, fields = []) {
  const button = h('button', { type: 'submit', class: 'danger' }, submit);
  const cancel = h('button', { type: 'button', class: 'plain', onclick: () => screen.panel.replaceChildren() }, 'Cancel');
  const el = h('form', { novalidate: true, class: 'confirm', 'aria-labelledby': 'confirm-title' });
  const slot = notice(el);
  el.append(h('h3', { id: 'confirm-title' }, title), ...[body].flat(), slot.slot, h('div', { class: 'buttons' }, button, cancel));
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    clearErrors(fields);
    await busy(button, async () => {
      try {
        await onSubmit(el);
      } catch (err) {
        slot.show(showErrors(err, fields));
      }
    });
  });
  screen.panel.replaceChildren(el);
  return { el, button };
}

function askDelete(screen, key) {
  const p = confirmPanel(screen, 'Delete this backup?',
    h('p', null, 'Delete ', h('strong', null, key), '? This cannot be undone.'), 'Delete', async () => {
      await api('DELETE', `/api/backups/${encodeURIComponent(key)}`);
      screen.panel.replaceChildren();
      screen.show(message('status', `Backup ${key} deleted.`));
      await screen.reload();
    });
  p.button.focus();
}

function askRestore(screen, key) {
  const confirm = field('confirm', 'Type the backup name to confirm', { attrs: { autocomplete: 'off', spellcheck: 'false' } });
  const p = confirmPanel(screen, 'Restore this backup?',
    [h('p', null, 'Restoring ', h('strong', null, key), ' replaces all the current data with the data of the backup, then restarts the server.'), confirm.row],
    'Restore', async () => {
      if (confirm.input.value !== key) {
        throw new APIError(400, { message: 'The name does not match.', data: { confirm: { message: `Type ${key} exactly.` } } });
      }
      await api('POST', `/api/backups/${encodeURIComponent(key)}/restore`);
      restoring(screen, key);
    }, [confirm]);
  const sync = () => {
    p.button.disabled = confirm.input.value !== key;
  };
  confirm.input.addEventListener('input', sync);
  sync();
  confirm.input.focus();
}

// restoring replaces the screen with the restart's progress: it polls
// /api/health until the server answers with no restore running (the
// restarted process), bounded, then reloads the page.
function restoring(screen, key) {
  // Indeterminate (no value) until the server is back.
  const bar = h('progress', { id: 'restore-progress', max: '100' });
  const state = h('p', { role: 'status' }, 'Restoring… waiting for the server to restart.');
  const view = h('main', { class: 'page backups', 'aria-busy': 'true' },
    h('h1', { tabindex: '-1' }, 'Restoring backup'),
    h('p', null, 'Restoring ', h('strong', null, key), '. The page reloads when the server is back.'),
    h('div', { class: 'field' }, h('label', { for: 'restore-progress' }, 'Restart progress'), bar), state);
  screen.main.replaceWith(view);
  screen.main = view;
  view.querySelector('h1').focus();
  let n = 0;
  const poll = async () => {
    if (!view.isConnected) return;
    n++;
    try {
      const res = await api('GET', '/api/health');
      if (!(res && res.data && res.data.canBackup === false)) {
        bar.value = 100;
        state.textContent = 'The server is back. Reloading…';
        try {
          sessionStorage.setItem(restoredKey, key);
        } catch {
          // No storage: the reloaded screen just does not say it.
        }
        location.reload();
        return;
      }
      state.textContent = `Restoring… the server is still at work (${n} s).`;
    } catch {
      state.textContent = `Restoring… waiting for the server to restart (${n} s).`;
    }
    if (n >= restartPolls) {
      view.removeAttribute('aria-busy');
      bar.value = 0;
      state.replaceWith(message('alert', `The server did not come back within ${restartPolls} seconds. Reload the page to check again.`),
        h('button', { type: 'button', onclick: () => location.reload() }, 'Reload'));
      return;
    }
    setTimeout(poll, restartPollMs);
  };
  setTimeout(poll, restartPollMs);
}

// ---- settings: automatic backups and S3 ----

function settingsSection() {
  const wrap = h('div', { 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Loading…'));
  api('GET', '/api/settings').then(
    (s) => wrap.replaceChildren(settingsForm((s && s.backups) || {}), testForm(), encryptionForm(((s && s.backups) || {}).encryption)),
    (err) => wrap.replaceChildren(message('alert', err.message)),
  ).finally(() => wrap.removeAttribute('aria-busy'));
  return h('section', { 'aria-labelledby': 'bk-settings' }, h('h2', { id: 'bk-settings' }, 'Automatic backups and storage'), wrap);
}

function settingsForm(b) {
  const s3 = b.s3 || {};
  const cron = field('backups.cron', 'Cron expression', { attrs: { autocomplete: 'off', spellcheck: 'false' } });
  cron.input.value = b.cron || '';
  const preset = field('preset', 'Schedule', { type: 'select', options: [...presets, ['custom', 'Custom']] });
  const syncPreset = () => {
    preset.input.value = presets.some(([v]) => v === cron.input.value.trim()) ? cron.input.value.trim() : 'custom';
  };
  syncPreset();
  preset.input.addEventListener('change', () => {
    if (preset.input.value !== 'custom') cron.input.value = preset.input.value;
    else cron.input.focus();
  });
  cron.input.addEventListener('input', syncPreset);
  const keep = field('backups.cronMaxKeep', 'Automatic backups to keep', { type: 'number', attrs: { min: '1', step: '1' },
    after: h('p', { class: 'hint' }, 'cronMaxKeep; the newest ones') });
  keep.input.value = String(b.cronMaxKeep ?? 3);
  const kf = keepFields(b);
  const f = {
    enabled: field('backups.s3.enabled', 'Store backups in an S3 bucket', { type: 'checkbox', attrs: { checked: !!s3.enabled } }),
    bucket: field('backups.s3.bucket', 'Bucket', { attrs: { autocomplete: 'off' } }),
    region: field('backups.s3.region', 'Region', { attrs: { autocomplete: 'off' } }),
    endpoint: field('backups.s3.endpoint', 'Endpoint', { type: 'url', attrs: { autocomplete: 'off' } }),
    accessKey: field('backups.s3.accessKey', 'Access key', { attrs: { autocomplete: 'off' } }),
    secret: field('backups.s3.secret', 'Secret', { type: 'password', attrs: { autocomplete: 'new-password', placeholder: 'Unchanged' } }),
    forcePathStyle: field('backups.s3.forcePathStyle', 'Force path-style addressing', { type: 'checkbox', attrs: { checked: !!s3.forcePathStyle } }),
  };
  for (const k of ['bucket', 'region', 'endpoint', 'accessKey']) f[k].input.value = s3[k] || '';
  const cont = b.continuous || {};
  const c = {
    enabled: field('backups.continuous.enabled', 'Continuous backup to the bucket', { type: 'checkbox', attrs: { checked: !!cont.enabled } }),
    retentionDays: field('backups.continuous.retentionDays', 'Days of restore points to keep', { type: 'number', attrs: { min: '0', step: '1' } }),
  };
  c.retentionDays.input.value = String(cont.retentionDays ?? 7);
  const fields = [preset, cron, keep, ...kf.fields, ...Object.values(f), ...Object.values(c)];
  const button = h('button', { type: 'submit' }, 'Save settings');
  const el = h('form', { novalidate: true, class: 'settings-form' });
  const slot = notice(el);
  const rule = h('p', { class: 'hint', id: 'bk-retention' }, retentionText(b));
  el.addEventListener('input', () => { rule.textContent = retentionText({ cronMaxKeep: Number(keep.input.value), ...kf.values() }); });
  el.append(preset.row, cron.row, keep.row, ...kf.rows, rule,
    h('fieldset', null, h('legend', null, 'S3 storage'), f.enabled.row, f.bucket.row, f.region.row, f.endpoint.row,
      f.accessKey.row, f.secret.row, h('p', { class: 'hint' }, 'The secret is never shown: leave it empty to keep the stored one.'),
      f.forcePathStyle.row),
    h('fieldset', null, h('legend', null, 'Continuous backup'), c.enabled.row, c.retentionDays.row,
      h('p', { class: 'hint' }, 'Ships every change to the S3 bucket above within a second; strongbox restore rebuilds any instant of the kept days from the bucket alone.')),
    slot.slot, h('div', null, button));
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    clearErrors(fields);
    const body = {
      cron: cron.input.value.trim(),
      cronMaxKeep: Number(keep.input.value),
      ...kf.values(),
      s3: { enabled: f.enabled.input.checked, forcePathStyle: f.forcePathStyle.input.checked },
      continuous: { enabled: c.enabled.input.checked, retentionDays: Number(c.retentionDays.input.value) },
    };
    for (const k of ['bucket', 'region', 'endpoint', 'accessKey']) body.s3[k] = f[k].input.value.trim();
    if (f.secret.input.value) body.s3.secret = f.secret.input.value;
    await busy(button, async () => {
      try {
        await api('PATCH', '/api/settings', { backups: body });
        f.secret.input.value = '';
        slot.show(message('status', 'Settings saved.'));
      } catch (err) {
        slot.show(showErrors(err, fields));
      }
    });
  });
  return el;
}

function testForm() {
  const button = h('button', { type: 'submit', class: 'plain' }, 'Test connection');
  const el = h('form', { novalidate: true, class: 'inline-form' });
  const slot = notice(el);
  el.append(h('p', { class: 'hint' }, 'Tests the saved S3 settings: save them first.'), slot.slot, h('div', null, button));
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    await busy(button, async () => {
      try {
        await api('POST', '/api/settings/test/s3', { filesystem: 'backups' });
        slot.show(message('status', 'Connection to the S3 bucket succeeded.'));
      } catch (err) {
        slot.show(message('alert', err.message));
      }
    });
  });
  return el;
}
