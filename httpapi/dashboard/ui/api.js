// The JSON API, as the SDK calls it, and the superuser's session, kept in
// localStorage under the key PocketBase's dashboard uses.

const authKey = 'pocketbase_auth';

// apiURL is the URL of path (under /api/) on the server, one level above
// /_/ (so a proxy that mounts the server under a prefix keeps working).
// It reads the document only when called, so that the module's pure
// functions (tokenPayload) can be imported where there is none (Node's
// test runner).
export function apiURL(path) {
  return new URL(path.replace(/^\//, ''), new URL('../', document.baseURI));
}

export class APIError extends Error {
  constructor(status, body) {
    const b = body && typeof body === 'object' && !Array.isArray(body) ? body : {};
    super(typeof b.message === 'string' && b.message ? b.message : `The request failed (${status || 'no answer'}).`);
    this.status = status;
    this.body = b;
    this.data = b.data && typeof b.data === 'object' && !Array.isArray(b.data) ? b.data : {};
  }
}

// api sends a request to path (under /api/) with body as JSON, and the
// superuser's token if there is one, unless opts.guest (sign-in and the
// public pages, which need none); it returns the decoded answer (null for
// a 204) or throws an APIError. opts.headers, if given, is called with
// the answer's headers (a Headers) before it returns.
export async function api(method, path, body, opts = {}) {
  const headers = { Accept: 'application/json' };
  const auth = opts.guest ? null : loadAuth();
  if (auth) headers.Authorization = auth.token;
  const init = { method, headers, credentials: 'omit', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(apiURL(path), init);
  } catch {
    throw new APIError(0, { message: 'The server cannot be reached.' });
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) throw new APIError(res.status, data);
  if (opts.headers) opts.headers(res.headers);
  return data;
}

// collectionPath is the path of a route of the collection id or name.
export function collectionPath(collection, action) {
  return `/api/collections/${encodeURIComponent(collection)}/${action}`;
}

// tokenPayload decodes the payload (the middle part) of a JWT, without
// verifying anything: it only picks the URL a page posts to. It returns
// null for anything that is not a JWT with an object payload.
export function tokenPayload(token) {
  const parts = String(token || '').split('.');
  if (parts.length !== 3 || !parts[1] || !/^[A-Za-z0-9_-]+$/.test(parts[1])) return null;
  try {
    let s = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    s += '='.repeat((4 - (s.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
    const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

// loadAuth returns the stored session {token, record}, or null when there
// is none or its token has expired.
export function loadAuth() {
  let v;
  try {
    v = JSON.parse(localStorage.getItem(authKey) || 'null');
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || typeof v.token !== 'string' || !v.token) return null;
  const p = tokenPayload(v.token);
  if (!p || (typeof p.exp === 'number' && p.exp * 1000 <= Date.now())) return null;
  return v;
}

export function saveAuth(token, record) {
  localStorage.setItem(authKey, JSON.stringify({ token, record }));
}

export function clearAuth() {
  localStorage.removeItem(authKey);
}
