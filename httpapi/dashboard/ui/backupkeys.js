// The encryption of backups on the Backups screen: backups.encryption
// (enabled, the write-only identity, extra recipients) in a form of its
// own, and the public key (recipient) of the stored identity. "Generate
// identity" makes a new X25519 key pair in the browser with WebCrypto
// (crypto.subtle, X25519), so the private key exists nowhere but here
// until it is saved; a browser without X25519 is told to use age-keygen.
// bech32 and ageKeys are pure (Node's test runner imports them).

import { api } from './api.js';
import { busy, h, message, notice } from './dom.js';
import { clearErrors, field, showErrors } from './forms.js';

const charset = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function polymod(values) {
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = (((chk & 0x1ffffff) << 5) ^ v) >>> 0;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk = (chk ^ gen[i]) >>> 0;
  }
  return chk;
}

// bech32 encodes bytes (a Uint8Array) under the human-readable part hrp
// (BIP 173, as age encodes its keys), in lower case.
export function bech32(hrp, bytes) {
  hrp = hrp.toLowerCase();
  const values = [];
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      values.push((acc >>> bits) & 31);
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) values.push((acc << (5 - bits)) & 31);
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
  const chk = (polymod([...expanded, ...values, 0, 0, 0, 0, 0, 0]) ^ 1) >>> 0;
  let out = `${hrp}1${values.map((v) => charset[v]).join('')}`;
  for (let i = 0; i < 6; i++) out += charset[(chk >>> (5 * (5 - i))) & 31];
  return out;
}

// ageKeys returns the age identity ("AGE-SECRET-KEY-1…") and recipient
// ("age1…") of a 32-byte X25519 private key and its public key.
export function ageKeys(priv, pub) {
  return { identity: bech32('age-secret-key-', priv).toUpperCase(), recipient: bech32('age', pub) };
}

// generate makes a new key pair with WebCrypto's X25519: the private
// key is the last 32 bytes of its PKCS #8 form (RFC 8410).
export async function generate(subtle = globalThis.crypto && globalThis.crypto.subtle) {
  if (!subtle) throw new Error('no WebCrypto');
  const pair = await subtle.generateKey({ name: 'X25519' }, true, ['deriveBits']);
  const pkcs8 = new Uint8Array(await subtle.exportKey('pkcs8', pair.privateKey));
  const pub = new Uint8Array(await subtle.exportKey('raw', pair.publicKey));
  return ageKeys(pkcs8.slice(pkcs8.length - 32), pub);
}

// recipientsOf splits the text of the recipients field: one per line,
// blank lines dropped.
export function recipientsOf(text) {
  return text.split('\n').map((s) => s.trim()).filter(Boolean);
}

// encryptionForm is the form of backups.encryption e (the settings
// answer's: no identity, its recipient).
export function encryptionForm(e = {}) {
  const f = {
    enabled: field('backups.encryption.enabled', 'Encrypt new backups (age)', { type: 'checkbox', attrs: { checked: !!e.enabled } }),
    identity: field('backups.encryption.identity', 'Identity (private key)', {
      type: 'password',
      attrs: { autocomplete: 'off', spellcheck: 'false', placeholder: e.recipient ? 'Unchanged' : 'AGE-SECRET-KEY-1…' },
    }),
    recipients: field('backups.encryption.recipients', 'More recipients (age1…, one a line)', {
      type: 'textarea', value: (e.recipients || []).join('\n'), attrs: { rows: '3', spellcheck: 'false' },
    }),
  };
  const shown = h('code', { class: 'key' }, e.recipient || '');
  const recipientRow = h('p', { class: 'hint' }, 'Public key (recipient) of the identity: ', shown);
  recipientRow.hidden = !e.recipient;
  const keep = h('p', { role: 'status', class: 'hint' });
  const tell = (text) => { keep.textContent = text; keep.hidden = !text; };
  tell('');
  const gen = h('button', { type: 'button', class: 'plain' }, 'Generate identity');
  gen.addEventListener('click', async () => {
    try {
      const k = await generate();
      f.identity.input.type = 'text';
      f.identity.input.value = k.identity;
      shown.textContent = k.recipient;
      recipientRow.hidden = false;
      tell('Copy the identity to a safe place before saving: no encrypted backup can be restored without it.');
      f.identity.input.focus();
      f.identity.input.select();
    } catch {
      tell('This browser cannot generate X25519 keys: run age-keygen and paste its AGE-SECRET-KEY-1… line.');
    }
  });
  const fields = Object.values(f);
  const button = h('button', { type: 'submit' }, 'Save encryption');
  const el = h('form', { novalidate: true, class: 'settings-form', 'aria-labelledby': 'bk-enc' });
  const slot = notice(el);
  el.append(
    h('fieldset', null, h('legend', { id: 'bk-enc' }, 'Encryption'),
      h('p', { class: 'hint' }, 'Archives are age files: decrypt one by hand with age -d -i key.txt name.zip > plain.zip.'),
      f.enabled.row, f.identity.row, h('div', null, gen), keep, recipientRow, f.recipients.row),
    slot.slot, h('div', null, button));
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (button.disabled) return;
    clearErrors(fields);
    const body = { enabled: f.enabled.input.checked, recipients: recipientsOf(f.recipients.input.value) };
    if (f.identity.input.value.trim()) body.identity = f.identity.input.value.trim();
    await busy(button, async () => {
      try {
        const s = await api('PATCH', '/api/settings', { backups: { encryption: body } });
        const got = (s && s.backups && s.backups.encryption) || {};
        f.identity.input.value = '';
        f.identity.input.type = 'password';
        f.identity.input.placeholder = got.recipient ? 'Unchanged' : 'AGE-SECRET-KEY-1…';
        shown.textContent = got.recipient || '';
        recipientRow.hidden = !got.recipient;
        tell('');
        slot.show(message('status', 'Encryption saved.'));
      } catch (err) {
        slot.show(showErrors(err, fields));
      }
    });
  });
  return el;
}
