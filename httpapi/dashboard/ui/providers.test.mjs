// Unit tests of providers.js, the OAuth2 provider forms' data and pure
// functions (Node's test runner: node --test).
import test from 'node:test';
import assert from 'node:assert/strict';
import { errorLines, fieldsFor, filterProviders, glyph, label, presetFor, presets, providerPayload, redirectURL, valueOf } from './providers.js';

// The names of package strongbox/authn (ProviderNames), which the server
// accepts and no other.
const serverNames = ['apple', 'bitbucket', 'box', 'discord', 'facebook', 'gitea', 'gitee', 'github', 'gitlab',
  'google', 'instagram2', 'kakao', 'lark', 'linear', 'livechat', 'mailcow', 'microsoft',
  'monday', 'notion', 'oidc', 'oidc2', 'oidc3', 'patreon', 'planningcenter', 'spotify',
  'strava', 'trakt', 'twitch', 'twitter', 'vk', 'wakatime', 'yandex'];

test('the presets are the server\'s 32 names, each once, with a display name', () => {
  assert.equal(presets.length, 32);
  assert.deepEqual(presets.map((p) => p.name), serverNames);
  for (const p of presets) assert.ok(p.displayName, p.name);
  // Display names as package strongbox/authn/oauth2 has them.
  for (const [name, want] of [['github', 'GitHub'], ['instagram2', 'Instagram'], ['twitter', 'X/Twitter'], ['vk', 'ВКонтакте'], ['oidc3', 'OIDC'], ['monday', 'monday.com']]) {
    assert.equal(presetFor(name).displayName, want, name);
  }
  // PKCE is on by default but for these three.
  assert.deepEqual(presets.filter((p) => !p.pkce).map((p) => p.name), ['bitbucket', 'linear', 'vk']);
});

test('filterProviders searches display names and names, case-insensitively', () => {
  const names = (q) => filterProviders(q).map((p) => p.name);
  for (const tc of [
    { q: '', want: serverNames },
    { q: '   ', want: serverNames },
    { q: 'git', want: ['gitea', 'gitee', 'github', 'gitlab'] },
    { q: 'GIThub', want: ['github'] },
    { q: 'hub', want: ['github'] },
    { q: 'oidc', want: ['oidc', 'oidc2', 'oidc3'] },
    { q: 'oidc2', want: ['oidc2'] },
    { q: 'instagram2', want: ['instagram2'] },
    { q: 'twitter', want: ['twitter'] },
    { q: 'вконтакте', want: ['vk'] },
    { q: 'center', want: ['planningcenter'] },
    // A word's start first: X/Twitter, then box and yandex, which hold an x.
    { q: 'x', want: ['twitter', 'box', 'yandex'] },
    { q: 'gogle', want: [] },
  ]) {
    assert.deepEqual(names(tc.q), tc.want, `filterProviders(${JSON.stringify(tc.q)})`);
  }
});

test('fieldsFor offers the URLs only to the presets without endpoints', () => {
  const keys = (name, existing) => fieldsFor(name, existing).map((f) => f.key);
  const plain = ['clientId', 'clientSecret', 'displayName', 'pkce'];
  for (const name of serverNames) {
    const got = keys(name);
    if (/^oidc\d?$/.test(name)) {
      assert.deepEqual(got, ['clientId', 'clientSecret', 'authURL', 'tokenURL', 'userInfoURL', 'extra.jwksURL', 'extra.issuers', 'displayName', 'pkce'], name);
    } else if (name === 'mailcow') {
      assert.deepEqual(got, ['clientId', 'clientSecret', 'authURL', 'tokenURL', 'userInfoURL', 'displayName', 'pkce'], name);
    } else {
      assert.deepEqual(got, plain, name);
    }
  }
  const req = (name) => fieldsFor(name).filter((f) => f.required).map((f) => f.key);
  assert.deepEqual(req('oidc2'), ['clientId', 'clientSecret', 'authURL', 'tokenURL']);
  assert.deepEqual(req('mailcow'), ['clientId', 'clientSecret', 'authURL', 'tokenURL', 'userInfoURL']);
  // A stored preset that overrides a URL shows the URLs, so it can be seen
  // and cleared; its secret is no longer required.
  const stored = { name: 'gitlab', clientId: 'x', authURL: 'https://git.example.com/oauth/authorize', tokenURL: '', userInfoURL: '' };
  assert.deepEqual(keys('gitlab', stored), ['clientId', 'clientSecret', 'authURL', 'tokenURL', 'userInfoURL', 'displayName', 'pkce']);
  assert.deepEqual(keys('gitlab', { ...stored, authURL: '' }), plain);
  assert.equal(fieldsFor('gitlab', stored).find((f) => f.key === 'clientSecret').required, false);
  // A name the list does not know gets every URL.
  assert.deepEqual(keys('newcomer'), ['clientId', 'clientSecret', 'authURL', 'tokenURL', 'userInfoURL', 'displayName', 'pkce']);
});

test('providerPayload keeps the stored secret when the box is left empty', () => {
  // As GET /api/collections reads it: no clientSecret.
  const read = { pkce: null, name: 'github', clientId: 'old-id', authURL: '', tokenURL: '', userInfoURL: '', displayName: '', extra: null };
  const values = { clientId: ' new-id ', clientSecret: '', displayName: '', pkce: '' };
  const got = providerPayload(values, read);
  assert.equal('clientSecret' in got, false, 'an empty secret is left out, so the server keeps its own');
  assert.deepEqual(got, { ...read, clientId: 'new-id' });
  assert.equal(providerPayload({ ...values, clientSecret: ' s3cret\n' }, read).clientSecret, 's3cret');
  // A secret somehow in what was read is never sent back as it was.
  assert.equal('clientSecret' in providerPayload(values, { ...read, clientSecret: 'leaked' }), false);
});

test('providerPayload: PKCE, URLs, extra and what the form does not show', () => {
  for (const tc of [
    { name: 'pkce default', values: { pkce: '' }, want: { pkce: null } },
    { name: 'pkce on', values: { pkce: 'on' }, want: { pkce: true } },
    { name: 'pkce off', values: { pkce: 'off' }, want: { pkce: false } },
    { name: 'urls trimmed', values: { authURL: ' https://id.example.com/auth ', tokenURL: 'https://id.example.com/token' },
      want: { authURL: 'https://id.example.com/auth', tokenURL: 'https://id.example.com/token' } },
    { name: 'issuers a list', values: { 'extra.issuers': 'https://a.example.com, https://b.example.com\nhttps://c.example.com', 'extra.jwksURL': '' },
      want: { extra: { issuers: ['https://a.example.com', 'https://b.example.com', 'https://c.example.com'] } } },
    { name: 'empty extra is null', values: { 'extra.issuers': ' , ', 'extra.jwksURL': ' ' }, want: { extra: null } },
    { name: 'jwks kept beside', values: { 'extra.jwksURL': 'https://id.example.com/keys' }, want: { extra: { jwksURL: 'https://id.example.com/keys' } } },
  ]) {
    const got = providerPayload(tc.values, { name: 'oidc' });
    for (const [k, v] of Object.entries(tc.want)) assert.deepEqual(got[k], v, `${tc.name}: ${k}`);
  }
  // A key of extra the form has no field for, and a URL it does not show,
  // go back as they were read.
  const read = { name: 'gitlab', clientId: 'id', authURL: 'https://git.example.com/a', extra: { other: 1, issuers: ['x'] } };
  const got = providerPayload({ clientId: 'id', 'extra.issuers': '' }, read);
  assert.equal(got.authURL, 'https://git.example.com/a');
  assert.deepEqual(got.extra, { other: 1 });
  assert.deepEqual(read.extra, { other: 1, issuers: ['x'] }, 'what was read is not changed');
});

test('valueOf fills the form from the stored provider, never the secret', () => {
  const p = { name: 'oidc', clientId: 'cid', clientSecret: 'never', pkce: false, authURL: 'https://a', extra: { issuers: ['https://i1', 'https://i2'], jwksURL: 'https://k' } };
  assert.equal(valueOf(p, 'clientId'), 'cid');
  assert.equal(valueOf(p, 'clientSecret'), '');
  assert.equal(valueOf(p, 'pkce'), 'off');
  assert.equal(valueOf({ pkce: null }, 'pkce'), '');
  assert.equal(valueOf({ pkce: true }, 'pkce'), 'on');
  assert.equal(valueOf(p, 'extra.issuers'), 'https://i1, https://i2');
  assert.equal(valueOf(p, 'extra.jwksURL'), 'https://k');
  assert.equal(valueOf(null, 'tokenURL'), '');
  // The form's values give back what was stored.
  const keys = fieldsFor('oidc', p).map((f) => f.key);
  const back = providerPayload(Object.fromEntries(keys.map((k) => [k, valueOf(p, k)])), p);
  assert.deepEqual(back, { ...Object.fromEntries(Object.entries(p).filter(([k]) => k !== 'clientSecret')), tokenURL: '', userInfoURL: '', displayName: '' });
});

test('redirectURL: under the application URL when set, else the server', () => {
  for (const tc of [
    { app: 'https://app.example.com', server: 'http://127.0.0.1:8090/', want: 'https://app.example.com/api/oauth2-redirect' },
    { app: 'https://app.example.com/', server: 'http://127.0.0.1:8090/', want: 'https://app.example.com/api/oauth2-redirect' },
    { app: 'https://example.com/pb//', server: 'x', want: 'https://example.com/pb/api/oauth2-redirect' },
    { app: '  ', server: 'http://127.0.0.1:8090/', want: 'http://127.0.0.1:8090/api/oauth2-redirect' },
    { app: undefined, server: 'https://host.example/prefix/', want: 'https://host.example/prefix/api/oauth2-redirect' },
  ]) {
    assert.equal(redirectURL(tc.app, tc.server), tc.want, JSON.stringify(tc));
  }
});

test('errorLines names the provider and the field of each server error', () => {
  const pairs = [
    ['oauth2.providers.0.name', 'Invalid or missing provider with name gogle.'],
    ['oauth2.providers.1.authURL', 'Must be a valid URL.'],
    ['oauth2.providers.2.clientSecret', 'Cannot be blank.'],
    ['oauth2.providers.9.clientId', 'Cannot be blank.'],
    ['oauth2.mappedFields.name', 'Unknown field.'],
    ['name', 'Taken.'],
  ];
  assert.deepEqual(errorLines(pairs, ['gogle', 'oidc2', 'github']), [
    'gogle: Name: Invalid or missing provider with name gogle.',
    'OIDC (oidc2): Auth URL: Must be a valid URL.',
    'GitHub: Client secret: Cannot be blank.',
    'oauth2.providers.9.clientId: Cannot be blank.',
    'Mapped field name: Unknown field.',
    'name: Taken.',
  ]);
});

test('label and glyph: text only, telling the OIDC ones apart', () => {
  assert.deepEqual(['github', 'planningcenter', 'oidc', 'oidc2', 'twitter', 'instagram2'].map(label),
    ['GitHub', 'Planning Center', 'OIDC', 'OIDC (oidc2)', 'X/Twitter (twitter)', 'Instagram (instagram2)']);
  assert.deepEqual(['github', 'oidc', 'oidc3', 'instagram2', 'vk'].map(glyph), ['G', 'O', 'O3', 'I', 'В']);
});
