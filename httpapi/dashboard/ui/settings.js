// The Settings screens: #/settings (application name and URL, trusted
// proxy, rate limits) and #/settings/mail (sender, SMTP and "Send test
// email"), over GET/PATCH /api/settings and POST /api/settings/test/email.
// The SMTP password is write-only: the server never returns it, and an
// empty field keeps the stored one. Field errors (the envelope's data,
// nested like the body: data.smtp.host) show next to their field, in the
// element err-<dotted key>.

import { api } from './api.js';
import { busy, h, message, notice, stylesheet } from './dom.js';
import { clearErrors, field, showErrors } from './forms.js';

// The templates POST /api/settings/test/email can send.
const templates = [
  ['verification', 'Verification'],
  ['password-reset', 'Password reset'],
  ['email-change', 'Email change'],
  ['otp', 'One-time password'],
  ['login-alert', 'Login alert'],
];

// submitter wires form's submit to send() (which returns the status text)
// with the busy button and the banner in note (a notice of form: cleared
// when the form changes or another action starts); fields() returns the
// form's fields (built by field), whose errors show next to them.
function submitter(form, button, note, fields, send) {
  const run = () => busy(button, async () => {
    try {
      note.show(message('status', await send()));
    } catch (err) {
      note.show(showErrors(err, fields()));
    }
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    clearErrors(fields());
    run();
  });
}

// page builds a screen: its heading, and forms loaded from GET
// /api/settings by load(settings).
function page(title, cls, forms, load) {
  stylesheet('settings.css');
  const alert = h('div', { class: 'messages' });
  const node = h('main', { class: `page settings ${cls}` },
    h('h1', { tabindex: '-1' }, title),
    settingsNav(cls), alert, forms);
  api('GET', '/api/settings').then((v) => load(v || {}))
    .catch((err) => alert.replaceChildren(message('alert', err.message)));
  return { title, node };
}

// settingsNav is the Settings screens' own navigation, cls the current
// one's (app, mail, security).
export function settingsNav(cls) {
  const link = (href, key, text) => h('li', null, h('a', { href, 'aria-current': cls === key ? 'page' : null }, text));
  return h('nav', { class: 'subnav', 'aria-label': 'Settings' }, h('ul', null,
    link('#/settings', 'app', 'Application'), link('#/settings/mail', 'mail', 'Mail'), link('#/settings/security', 'security', 'Security')));
}

// section returns a form in a section with a heading.
function section(id, title, ...children) {
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), children);
}

// ruleRow returns the inputs of rate limit rule i, with a Remove button:
// {el, fields, value}.
function ruleRow(i, rule, onRemove) {
  const k = `rateLimits.rules.${i}`;
  const f = {
    label: field(`${k}.label`, 'Label', { attrs: { placeholder: '*:auth or /api/' } }),
    audience: field(`${k}.audience`, 'Audience', { type: 'select', options: [['', 'All'], ['@guest', 'Guests'], ['@auth', 'Authenticated']] }),
    maxRequests: field(`${k}.maxRequests`, 'Max requests', { type: 'number', attrs: { step: 1, min: 1 } }),
    duration: field(`${k}.duration`, 'Per seconds', { type: 'number', attrs: { step: 1, min: 1 } }),
  };
  f.label.input.value = rule.label || '';
  f.audience.input.value = rule.audience || '';
  f.maxRequests.input.value = rule.maxRequests ?? '';
  f.duration.input.value = rule.duration ?? '';
  const remove = h('button', { type: 'button', class: 'plain', onclick: onRemove }, `Remove rule ${i + 1}`);
  const el = h('fieldset', { class: 'rule' }, h('legend', null, `Rule ${i + 1}`),
    Object.values(f).map((x) => x.row), remove);
  const value = () => ({
    label: f.label.input.value.trim(),
    audience: f.audience.input.value,
    maxRequests: Number(f.maxRequests.input.value),
    duration: Number(f.duration.input.value),
  });
  return { el, fields: Object.values(f), value };
}

// rateLimits is the rules editor: rows, "Add rule", value() and fields()
// (those of the switch and of the rules shown now).
function rateLimits() {
  const enabled = field('rateLimits.enabled', 'Enable rate limiting', { type: 'checkbox' });
  const list = h('div', { class: 'rules' });
  let rules = [];
  const draw = (values) => {
    rules = values.map((r, i) => ruleRow(i, r, () => draw(rules.map((x) => x.value()).filter((_, j) => j !== i))));
    list.replaceChildren(...rules.map((r) => r.el));
    if (!rules.length) list.append(h('p', { class: 'hint' }, 'No rules.'));
  };
  const add = h('button', { type: 'button', class: 'plain', onclick: () => {
    draw([...rules.map((x) => x.value()), { label: '', audience: '', maxRequests: 1, duration: 1 }]);
    const inputs = list.querySelectorAll('input[type="text"]');
    if (inputs.length) inputs[inputs.length - 1].focus();
  } }, 'Add rule');
  const el = h('div', null, enabled.row, list, add);
  return {
    el,
    fill(rl) {
      enabled.input.checked = !!rl.enabled;
      draw(Array.isArray(rl.rules) ? rl.rules : []);
    },
    value: () => ({ enabled: enabled.input.checked, rules: rules.map((x) => x.value()) }),
    fields: () => [enabled, ...rules.flatMap((r) => r.fields)],
  };
}

// appSettings is #/settings: application, trusted proxy, rate limits.
export function appSettings() {
  const name = field('meta.appName', 'Application name', { attrs: { autocomplete: 'off' } });
  const url = field('meta.appURL', 'Application URL', { type: 'url', attrs: { autocomplete: 'off' } });
  const headers = field('trustedProxy.headers', 'Trusted proxy headers (comma separated, e.g. X-Forwarded-For)');
  const leftmost = field('trustedProxy.useLeftmostIP', 'Use the leftmost IP of the header (else the rightmost)', { type: 'checkbox' });
  const limits = rateLimits();
  const button = h('button', { type: 'submit' }, 'Save changes');
  const form = h('form', { novalidate: true });
  const note = notice(form);
  form.append(section('app-h', 'Application', name.row, url.row),
    section('proxy-h', 'Trusted proxy', headers.row, leftmost.row),
    section('limits-h', 'Rate limits', limits.el),
    note.slot, h('div', null, button));
  const fill = (v) => {
    const meta = v.meta || {};
    const proxy = v.trustedProxy || {};
    name.input.value = meta.appName || '';
    url.input.value = meta.appURL || '';
    headers.input.value = Array.isArray(proxy.headers) ? proxy.headers.join(', ') : '';
    leftmost.input.checked = !!proxy.useLeftmostIP;
    limits.fill(v.rateLimits || {});
  };
  submitter(form, button, note, () => [name, url, headers, leftmost, ...limits.fields()], async () => {
    const body = {
      meta: { appName: name.input.value.trim(), appURL: url.input.value.trim() },
      trustedProxy: {
        headers: headers.input.value.split(',').map((s) => s.trim()).filter(Boolean),
        useLeftmostIP: leftmost.input.checked,
      },
      rateLimits: limits.value(),
    };
    fill((await api('PATCH', '/api/settings', body)) || {});
    return 'Settings saved.';
  });
  return page('Settings', 'app', form, fill);
}

// mailForm is the sender and SMTP form of #/settings/mail.
function mailForm() {
  const f = {
    senderName: field('meta.senderName', 'Sender name'),
    senderAddress: field('meta.senderAddress', 'Sender address', { type: 'email' }),
    enabled: field('smtp.enabled', 'Use an SMTP server (else mails stay in the outbox)', { type: 'checkbox' }),
    host: field('smtp.host', 'SMTP server host'),
    port: field('smtp.port', 'Port', { type: 'number', attrs: { step: 1, min: 0 } }),
    username: field('smtp.username', 'Username', { attrs: { autocomplete: 'off' } }),
    password: field('smtp.password', 'Password', { type: 'password', attrs: { autocomplete: 'new-password', placeholder: 'Unchanged (leave empty to keep)' } }),
    authMethod: field('smtp.authMethod', 'Authentication method', { type: 'select', options: [['PLAIN', 'PLAIN (default)'], ['LOGIN', 'LOGIN']] }),
    tls: field('smtp.tls', 'Use TLS from the start (else STARTTLS when offered)', { type: 'checkbox' }),
    localName: field('smtp.localName', 'EHLO/HELO domain (optional)'),
  };
  const button = h('button', { type: 'submit' }, 'Save changes');
  const form = h('form', { novalidate: true });
  const note = notice(form);
  form.append(section('sender-h', 'Sender', f.senderName.row, f.senderAddress.row),
    section('smtp-h', 'SMTP', Object.entries(f).filter(([k]) => !k.startsWith('sender')).map(([, x]) => x.row)),
    note.slot, h('div', null, button));
  const fill = (v) => {
    const meta = v.meta || {};
    const smtp = v.smtp || {};
    f.senderName.input.value = meta.senderName || '';
    f.senderAddress.input.value = meta.senderAddress || '';
    f.enabled.input.checked = !!smtp.enabled;
    f.host.input.value = smtp.host || '';
    f.port.input.value = smtp.port ?? '';
    f.username.input.value = smtp.username || '';
    f.password.input.value = '';
    f.authMethod.input.value = smtp.authMethod || 'PLAIN';
    f.tls.input.checked = !!smtp.tls;
    f.localName.input.value = smtp.localName || '';
  };
  submitter(form, button, note, () => Object.values(f), async () => {
    const smtp = {
      enabled: f.enabled.input.checked,
      host: f.host.input.value.trim(),
      port: Number(f.port.input.value),
      username: f.username.input.value,
      authMethod: f.authMethod.input.value,
      tls: f.tls.input.checked,
      localName: f.localName.input.value.trim(),
    };
    // Write-only: an empty field keeps the stored password.
    if (f.password.input.value) smtp.password = f.password.input.value;
    const meta = { senderName: f.senderName.input.value.trim(), senderAddress: f.senderAddress.input.value.trim() };
    fill((await api('PATCH', '/api/settings', { meta, smtp })) || {});
    return 'Settings saved.';
  });
  return { form, fill };
}

// testEmailText is what "Send test email" says of a 204: SMTP took the
// mail, or (outbox, the file the server named in Strongbox-Outbox-File)
// SMTP is off and the mail is in the outbox, not sent.
export function testEmailText(outbox) {
  if (!outbox) return 'The test email was sent: the SMTP server accepted it.';
  return `Not sent: SMTP is off, so the test email was written to the outbox, mail/${outbox} in the data dir. Turn on "Use an SMTP server" and save to send mail.`;
}

// testEmailForm is "Send test email": a recipient and a template.
function testEmailForm() {
  const email = field('email', 'Send to', { type: 'email', attrs: { autocomplete: 'email' } });
  const template = field('template', 'Template', { type: 'select', options: templates });
  const button = h('button', { type: 'submit' }, 'Send test email');
  const form = h('form', { novalidate: true });
  const note = notice(form);
  form.append(section('test-h', 'Send a test email', h('p', { class: 'hint' }, 'Save the settings first: the test uses the saved ones.'),
    email.row, template.row),
  note.slot, h('div', null, button));
  submitter(form, button, note, () => [email, template], async () => {
    let outbox = '';
    await api('POST', '/api/settings/test/email', { email: email.input.value.trim(), template: template.input.value },
      { headers: (hd) => { outbox = hd.get('Strongbox-Outbox-File') || ''; } });
    return testEmailText(outbox);
  });
  return form;
}

// mailSettings is #/settings/mail.
export function mailSettings() {
  const mail = mailForm();
  return page('Mail settings', 'mail', [mail.form, testEmailForm()], mail.fill);
}
