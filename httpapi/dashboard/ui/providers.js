// The OAuth2 provider presets as the server knows them (package
// strongbox/authn/oauth2: the names PocketBase v0.31 registers, their
// display names and PKCE defaults) and the pure functions of the
// provider forms: the picker's search, each provider's fields, the
// provider sent back, the redirect URL to register, the server's errors
// as lines. No DOM: Node's test runner imports it.

// selfHosted: the presets with no endpoints of their own. The generic
// OpenID Connect ones need authURL and tokenURL (claims from userInfoURL
// when set, else from the id_token, verified with extra.jwksURL or the
// keys extra.issuers names); mailcow needs all three URLs.
const oidc = 'oidc';
const mailcow = 'mailcow';

// presets are the 32 providers: name, displayName (the server's default
// for auth-methods), pkce (its PKCE default) and kind (oidc, mailcow, or
// empty for a preset with its own endpoints), in the order of their names.
export const presets = Object.freeze([
  ['apple', 'Apple'], ['bitbucket', 'Bitbucket', false], ['box', 'Box'], ['discord', 'Discord'],
  ['facebook', 'Facebook'], ['gitea', 'Gitea'], ['gitee', 'Gitee'], ['github', 'GitHub'], ['gitlab', 'GitLab'],
  ['google', 'Google'], ['instagram2', 'Instagram'], ['kakao', 'Kakao'], ['lark', 'Lark'], ['linear', 'Linear', false],
  ['livechat', 'LiveChat'], ['mailcow', 'mailcow', true, mailcow], ['microsoft', 'Microsoft'], ['monday', 'monday.com'],
  ['notion', 'Notion'], ['oidc', 'OIDC', true, oidc], ['oidc2', 'OIDC', true, oidc], ['oidc3', 'OIDC', true, oidc],
  ['patreon', 'Patreon'], ['planningcenter', 'Planning Center'], ['spotify', 'Spotify'], ['strava', 'Strava'],
  ['trakt', 'Trakt'], ['twitch', 'Twitch'], ['twitter', 'X/Twitter'], ['vk', 'ВКонтакте', false],
  ['wakatime', 'WakaTime'], ['yandex', 'Yandex'],
].map(([name, displayName, pkce = true, kind = '']) => Object.freeze({ name, displayName, pkce, kind })));

// presetFor returns the preset named name, or one made up for a name the
// list does not know (shown by its name, every URL offered).
export function presetFor(name) {
  return presets.find((p) => p.name === name) || { name: String(name), displayName: String(name), pkce: true, kind: 'unknown' };
}

// label is how a provider is named to a person: its display name, with
// its name when that differs in more than case and spaces (OIDC (oidc2),
// X/Twitter (twitter)).
export function label(name) {
  const p = presetFor(name);
  return p.displayName.toLowerCase().replace(/[^a-z0-9]/g, '') === p.name ? p.displayName : `${p.displayName} (${p.name})`;
}

// glyph is the text of a provider's badge: the initial of its display
// name, and the digit the name ends in (O, O2, O3 for the OIDC ones).
export function glyph(name) {
  const p = presetFor(name);
  const digit = /\d$/.test(p.name) && p.kind === oidc ? p.name.slice(-1) : '';
  return (p.displayName.charAt(0) || '?').toUpperCase() + digit;
}

// filterProviders returns the presets whose display name or name contains
// query, case-insensitively: first those where it starts a word, then the
// others, each group in the list's order. An empty query gives them all.
export function filterProviders(query, list = presets) {
  const q = String(query || '').trim().toLowerCase();
  if (!q) return [...list];
  const starts = [];
  const inside = [];
  for (const p of list) {
    const words = `${p.displayName} ${p.name}`.toLowerCase();
    if (!words.includes(q)) continue;
    (words.split(/[\s/.()]+/).some((w) => w.startsWith(q)) ? starts : inside).push(p);
  }
  return [...starts, ...inside];
}

const urlKeys = ['authURL', 'tokenURL', 'userInfoURL'];
const urlLabels = { authURL: 'Auth URL', tokenURL: 'Token URL', userInfoURL: 'User info URL' };

// pkceChoices are the PKCE select's options for a provider whose default
// is def: [value, text, the provider's pkce].
export function pkceChoices(def) {
  return [['', `Preset default (${def ? 'on' : 'off'})`, null], ['on', 'On', true], ['off', 'Off', false]];
}

// fieldsFor returns the fields of the provider name's form, given the
// provider as stored (existing, or null for one being added): each
// {key, label, kind (text, secret, url, list or pkce), required, hint}.
// Every provider has a client id, a client secret (required when none is
// stored; write-only), a display name and the PKCE switch; the URLs are
// offered only to the presets with no endpoints of their own (oidc*,
// mailcow), or when the stored provider already sets one (so that what
// it overrides is seen and can be cleared); the id_token's keys
// (extra.jwksURL, extra.issuers) only to the OIDC ones.
export function fieldsFor(name, existing = null) {
  const p = presetFor(name);
  const stored = !!existing;
  const out = [
    { key: 'clientId', label: 'Client ID', kind: 'text', required: true, hint: '' },
    {
      key: 'clientSecret', label: 'Client secret', kind: 'secret', required: !stored,
      hint: (stored ? 'Stored, never shown: leave empty to keep it.' : 'Write-only: never shown once saved.') +
        (p.name === 'apple' ? ' For Apple, the signed JWT you generate from your key.' : ''),
    },
  ];
  const set = urlKeys.some((k) => existing && existing[k]);
  if (p.kind === oidc) {
    out.push({ key: 'authURL', label: urlLabels.authURL, kind: 'url', required: true, hint: '' },
      { key: 'tokenURL', label: urlLabels.tokenURL, kind: 'url', required: true, hint: '' },
      { key: 'userInfoURL', label: urlLabels.userInfoURL, kind: 'url', required: false, hint: 'Empty: the user is read from the verified id_token.' },
      { key: 'extra.jwksURL', label: 'JWKS URL', kind: 'url', required: false, hint: 'The keys that sign the id_token.' },
      { key: 'extra.issuers', label: 'Issuers', kind: 'list', required: false, hint: 'Accepted iss values, separated by commas or spaces; without a JWKS URL the first one\'s discovery document names the keys.' });
  } else if (p.kind === mailcow || p.kind === 'unknown' || set) {
    const req = p.kind === mailcow;
    for (const k of urlKeys) out.push({ key: k, label: urlLabels[k], kind: 'url', required: req, hint: req ? '' : 'Empty: the preset\'s.' });
  }
  out.push({ key: 'displayName', label: 'Display name', kind: 'text', required: false, hint: `Empty: ${p.displayName}.` },
    { key: 'pkce', label: 'PKCE', kind: 'pkce', required: false, hint: '' });
  return out;
}

// valueOf is the form's starting value of the field key for the provider
// existing (null: a new one): the secret is always empty.
export function valueOf(existing, key) {
  const p = existing || {};
  if (key === 'clientSecret') return '';
  if (key === 'pkce') return p.pkce === true ? 'on' : p.pkce === false ? 'off' : '';
  if (key.startsWith('extra.')) {
    const v = p.extra && typeof p.extra === 'object' ? p.extra[key.slice(6)] : undefined;
    return Array.isArray(v) ? v.join(', ') : v === undefined || v === null ? '' : String(v);
  }
  return p[key] === undefined || p[key] === null ? '' : String(p[key]);
}

// providerPayload returns the provider to send for the form's values
// (field key to text, for the fields fieldsFor gave) over existing (the
// provider as read, or {name} for a new one): what the form does not show
// is kept as read; the texts are trimmed; an empty secret is left out, so
// the server keeps the stored one (a secret is never read back); PKCE is
// null (the preset's), true or false; issuers become a list.
export function providerPayload(values, existing) {
  const out = { ...existing };
  delete out.clientSecret;
  let extra = existing && existing.extra && typeof existing.extra === 'object' && !Array.isArray(existing.extra) ? { ...existing.extra } : null;
  for (const [key, raw] of Object.entries(values)) {
    const v = String(raw ?? '').trim();
    if (key === 'clientSecret') {
      if (v) out.clientSecret = v;
    } else if (key === 'pkce') {
      out.pkce = v === 'on' ? true : v === 'off' ? false : null;
    } else if (key.startsWith('extra.')) {
      extra = extra || {};
      const k = key.slice(6);
      const list = k === 'issuers' ? v.split(/[\s,]+/).filter(Boolean) : null;
      if (list ? list.length : v) extra[k] = list || v;
      else delete extra[k];
    } else {
      out[key] = v;
    }
  }
  out.extra = extra && Object.keys(extra).length ? extra : null;
  return out;
}

// redirectURL is the URL to register at a provider, where it sends the
// browser back (GET|POST /api/oauth2-redirect, the SDK's popup flow): under
// the application URL (meta.appURL) when one is set, else under server,
// the URL this dashboard reaches the API at.
export function redirectURL(appURL, server) {
  const base = String(appURL || '').trim() || String(server || '');
  return `${base.replace(/\/+$/, '')}/api/oauth2-redirect`;
}

// errorLines returns the field errors of a save ([key, message] pairs,
// see forms.js fieldErrors) as lines a person reads, each naming the
// provider (names, the providers' names in the order sent) and the field:
// "GitHub: Client secret: Cannot be blank."
export function errorLines(pairs, names) {
  const labels = { name: 'Name', ...urlLabels, clientId: 'Client ID', clientSecret: 'Client secret', displayName: 'Display name', pkce: 'PKCE', 'extra.jwksURL': 'JWKS URL', 'extra.issuers': 'Issuers' };
  return pairs.map(([key, msg]) => {
    const m = /^oauth2\.providers\.(\d+)\.(.+)$/.exec(key);
    if (m && Number(m[1]) < names.length) return `${label(names[Number(m[1])])}: ${labels[m[2]] || m[2]}: ${msg}`;
    const f = /^oauth2\.mappedFields\.(.+)$/.exec(key);
    if (f) return `Mapped field ${f[1]}: ${msg}`;
    return `${key}: ${msg}`;
  });
}
