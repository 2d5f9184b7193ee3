import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api, checkApiKey, requestHeaders } from './client';
import { ApiError } from './problem';
import { serve } from './fakeServer';
import {
  chooseAccount,
  refusedNotice,
  session,
  sessionEndedNotice,
  signInWithKey as signIn,
  signInWithSession,
  signOut,
  subscribe,
} from './session';

// fetch is the browser boundary: a stub records each request and answers what the test says.
interface Call {
  url: string;
  headers: Record<string, string>;
}
let calls: Call[];
function answer(status: number, body?: unknown, contentType = 'application/json') {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push({ url, headers: { ...(init.headers as Record<string, string>) } });
      const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
      return new Response(status === 204 ? null : text, { status, headers: { 'Content-Type': contentType } });
    }),
  );
}

/** keyOf is the signed-in API key, if the console is signed in with one. */
function keyOf(): string | undefined {
  const c = session().credential;
  return c?.kind === 'apiKey' ? c.key : undefined;
}

const KEY = 'ebk_aaaaaaaaaaaaaaaa_secret';
const TOKEN = 'csrf-token-1';
const OTHER = 'ebk_bbbbbbbbbbbbbbbb_secret';

beforeEach(() => {
  calls = [];
  signOut();
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('requestHeaders', () => {
  it.each([
    { name: 'no key, no account', key: undefined, account: undefined, auth: undefined, acct: undefined },
    { name: 'a key, the key’s own account', key: KEY, account: undefined, auth: `Bearer ${KEY}`, acct: undefined },
    { name: 'a key and a chosen account', key: KEY, account: 'shop', auth: `Bearer ${KEY}`, acct: 'shop' },
    { name: 'an empty account is no account', key: KEY, account: '', auth: `Bearer ${KEY}`, acct: undefined },
  ])('$name', ({ key, account, auth, acct }) => {
    const h = requestHeaders(key === undefined ? undefined : { kind: 'apiKey', key }, account);
    expect(h.Authorization).toBe(auth);
    expect(h['X-Account-Id']).toBe(acct);
    expect('Authorization' in h).toBe(auth !== undefined);
    expect('X-Account-Id' in h).toBe(acct !== undefined);
  });
});

describe('requestHeaders with a user’s session', () => {
  const cred = { kind: 'session', username: 'alice', csrfToken: TOKEN } as const;
  it.each([
    { method: 'GET', csrf: undefined },
    { method: 'HEAD', csrf: undefined },
    { method: 'OPTIONS', csrf: undefined },
    { method: 'POST', csrf: TOKEN },
    { method: 'PUT', csrf: TOKEN },
    { method: 'PATCH', csrf: TOKEN },
    { method: 'DELETE', csrf: TOKEN },
    { method: 'delete', csrf: TOKEN },
  ])('$method sends the CSRF token: $csrf', ({ method, csrf }) => {
    const h = requestHeaders(cred, 'shop', method);
    expect(h['X-CSRF-Token']).toBe(csrf);
    expect('X-CSRF-Token' in h).toBe(csrf !== undefined);
    expect(h).not.toHaveProperty('Authorization'); // the browser sends the cookie
    expect(h['X-Account-Id']).toBe('shop');
  });

  it('sends no CSRF token with an API key, whatever the method', () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const h = requestHeaders({ kind: 'apiKey', key: KEY }, undefined, method);
      expect(h).not.toHaveProperty('X-CSRF-Token');
      expect(h.Authorization).toBe(`Bearer ${KEY}`);
    }
  });
});

describe('api with a user’s session', () => {
  beforeEach(() => {
    signInWithSession('alice', TOKEN);
  });

  it('sends the CSRF token on every change and not on reads; never an Authorization', async () => {
    const seen = serve({ status: 200, body: {} });
    chooseAccount('shop');
    await api('/buses');
    await api('/buses', { body: { name: 'orders' } });
    await api('/buses/orders', { method: 'PATCH', body: { description: 'x' } });
    await api('/buses/orders', { method: 'DELETE' });
    expect(seen.map((r) => [r.method, r.headers['X-CSRF-Token']])).toEqual([
      ['GET', undefined],
      ['POST', TOKEN],
      ['PATCH', TOKEN],
      ['DELETE', TOKEN],
    ]);
    for (const r of seen) {
      expect(r.headers).not.toHaveProperty('Authorization');
      expect(r.headers['X-Account-Id']).toBe('shop');
      expect(r.credentials).toBe('same-origin'); // the cookie goes along
    }
  });

  it('sends none of the console’s credentials on an anonymous request', async () => {
    const seen = serve({ status: 201, body: {} });
    chooseAccount('shop');
    await api('/session', { method: 'POST', body: { username: 'bob', password: 'x' }, anonymous: true });
    expect(seen[0].headers).not.toHaveProperty('X-CSRF-Token');
    expect(seen[0].headers).not.toHaveProperty('Authorization');
    expect(seen[0].headers).not.toHaveProperty('X-Account-Id');
    expect(seen[0].headers['Content-Type']).toBe('application/json');
  });

  it('signs out saying the session ended on a 401 (expired or revoked), and still throws the problem', async () => {
    serve({ status: 401, body: { status: 401, code: 'Unauthenticated', detail: 'missing or invalid credentials' } });
    chooseAccount('shop');
    const err = await api('/buses').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(401);
    expect(session()).toMatchObject({ credential: undefined, account: undefined, notice: sessionEndedNotice, checking: false, method: 'password' });
  });

  it('gives the account back when the same user signs in again after the session ended', async () => {
    serve({ status: 401, body: { status: 401, code: 'Unauthenticated' } });
    chooseAccount('shop');
    await api('/buses').catch(() => {});
    signInWithSession('alice', 'csrf-token-2');
    expect(session()).toMatchObject({ credential: { kind: 'session', username: 'alice' }, account: 'shop' });
  });

  it.each([
    ['another user signs in', () => signInWithSession('bob', 'csrf-token-2')],
    ['the user signed out in between', () => (signOut(), signInWithSession('alice', 'csrf-token-2'))],
    ['an API key signs in', () => signIn(KEY)],
  ])('starts in the own account when %s', async (_, next) => {
    serve({ status: 401, body: { status: 401, code: 'Unauthenticated' } });
    chooseAccount('shop');
    await api('/buses').catch(() => {});
    next();
    expect(session().account).toBeUndefined();
  });

  it('keeps the session on a 401 to an anonymous request (a refused sign-in)', async () => {
    serve({ status: 401, body: { status: 401, code: 'Unauthenticated', detail: 'invalid user name or password' } });
    await expect(api('/session', { method: 'POST', body: {}, anonymous: true })).rejects.toMatchObject({ status: 401 });
    expect(session().credential).toMatchObject({ kind: 'session', csrfToken: TOKEN });
  });

  it('keeps the session on a late 401 to a request made with an earlier session', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    serve(async () => {
      await gate;
      return { status: 401, body: { status: 401, code: 'Unauthenticated' } };
    });
    const pending = api('/buses').catch((e: unknown) => e);
    signInWithSession('alice', 'csrf-token-2');
    release();
    expect(await pending).toBeInstanceOf(ApiError);
    expect(session().credential).toMatchObject({ kind: 'session', csrfToken: 'csrf-token-2' });
  });

  it('reads Retry-After of a 429 into the error', async () => {
    serve({ status: 429, body: { status: 429, code: 'TooManySignInAttempts', detail: 'try again in 4s' }, headers: { 'Retry-After': '4' } });
    const err = await api('/session', { method: 'POST', body: {}, anonymous: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).retryAfter).toBe(4);
  });

  // Another tab signed in again: the browser's one cookie is a new session, whose token this tab does not have.
  const stale = { status: 403, body: { status: 403, code: 'CrossSiteRequestRefused', detail: 'the CSRF token in X-CSRF-Token is not this session’s' } };

  it('takes the new token of the same user’s session and sends a refused change once more', async () => {
    const seen = serve((r) => {
      if (r.url === '/api/v1/session') return { status: 200, body: { id: 's2', username: 'alice', current: true, csrfToken: 'csrf-token-2' } };
      return r.headers['X-CSRF-Token'] === 'csrf-token-2' ? { status: 201, body: { name: 'orders' } } : stale;
    });
    expect(await api('/buses', { body: { name: 'orders' } })).toEqual({ name: 'orders' });
    expect(seen.map((r) => `${r.method} ${r.url} ${r.headers['X-CSRF-Token'] ?? '-'}`)).toEqual([
      `POST /api/v1/buses ${TOKEN}`,
      'GET /api/v1/session -',
      'POST /api/v1/buses csrf-token-2',
    ]);
    expect(session().credential).toMatchObject({ kind: 'session', username: 'alice', csrfToken: 'csrf-token-2' });
  });

  it('sends a refused change only once when the token is the cookie’s own', async () => {
    const seen = serve((r) => (r.url === '/api/v1/session' ? { status: 200, body: { username: 'alice', csrfToken: TOKEN } } : stale));
    await expect(api('/buses', { body: { name: 'orders' } })).rejects.toMatchObject({ status: 403 });
    expect(seen).toHaveLength(2);
    expect(session().credential).toMatchObject({ kind: 'session', csrfToken: TOKEN });
  });

  it('signs out, saying so, when the cookie now holds another user’s session', async () => {
    serve((r) => (r.url === '/api/v1/session' ? { status: 200, body: { username: 'bob', csrfToken: 'csrf-bob' } } : stale));
    await expect(api('/buses', { body: { name: 'orders' } })).rejects.toMatchObject({ status: 403 });
    expect(session().credential).toBeUndefined();
    expect(session().notice).toMatch(/signed in as bob in another tab/);
  });

  it('signs out when the cookie holds no live session any more', async () => {
    serve((r) => (r.url === '/api/v1/session' ? { status: 401, body: { status: 401, code: 'Unauthenticated' } } : stale));
    await expect(api('/buses', { body: { name: 'orders' } })).rejects.toMatchObject({ status: 403 });
    expect(session()).toMatchObject({ credential: undefined, notice: sessionEndedNotice });
  });

  it('does not renew the token for another refusal, nor for an API key', async () => {
    const seen = serve({ status: 403, body: { status: 403, code: 'Forbidden', detail: 'role viewer lacks resources.write' } });
    await expect(api('/buses', { body: { name: 'orders' } })).rejects.toMatchObject({ status: 403 });
    expect(seen).toHaveLength(1);
    signIn(KEY);
    const withKey = serve(stale);
    await expect(api('/buses', { body: { name: 'orders' } })).rejects.toMatchObject({ status: 403 });
    expect(withKey).toHaveLength(1);
    expect(keyOf()).toBe(KEY);
  });
});

describe('api', () => {
  it('sends the key, and no CSRF token, on a change made with an API key', async () => {
    const seen = serve({ status: 201, body: {} });
    signIn(KEY);
    await api('/buses', { body: { name: 'orders' } });
    await api('/buses/orders', { method: 'DELETE' });
    for (const r of seen) {
      expect(r.headers.Authorization).toBe(`Bearer ${KEY}`);
      expect(r.headers).not.toHaveProperty('X-CSRF-Token');
    }
  });

  it('sends the session’s key and no X-Account-Id until an account is chosen', async () => {
    answer(200, { buses: [] });
    signIn(KEY);
    await api('/buses');
    expect(calls[0].url).toBe('/api/v1/buses');
    expect(calls[0].headers.Authorization).toBe(`Bearer ${KEY}`);
    expect(calls[0].headers).not.toHaveProperty('X-Account-Id');

    chooseAccount('shop');
    await api('/buses');
    expect(calls[1].headers['X-Account-Id']).toBe('shop');

    chooseAccount(undefined);
    await api('/buses');
    expect(calls[2].headers).not.toHaveProperty('X-Account-Id');
  });

  it('sends no Authorization when signed out', async () => {
    answer(200, {});
    await api('/buses');
    expect(calls[0].headers).not.toHaveProperty('Authorization');
  });

  it('forgets the chosen account at the next sign-in', async () => {
    answer(200, {});
    signIn(KEY);
    chooseAccount('shop');
    signIn(OTHER);
    await api('/buses');
    expect(calls[0].headers.Authorization).toBe(`Bearer ${OTHER}`);
    expect(calls[0].headers).not.toHaveProperty('X-Account-Id');
  });

  it('signs out with a notice on a 401 to the session’s key, and still throws the problem', async () => {
    answer(401, { status: 401, code: 'Unauthenticated', detail: 'missing or invalid credentials' }, 'application/problem+json');
    signIn(KEY);
    chooseAccount('shop');
    const seen = vi.fn();
    const off = subscribe(seen);
    const err = await api('/buses').catch((e: unknown) => e);
    off();
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(401);
    expect(seen).toHaveBeenCalled();
    expect(session()).toMatchObject({ credential: undefined, account: undefined, notice: refusedNotice, checking: false });
  });

  it('keeps the session on a late 401 to a request made with an earlier key', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        await gate;
        return new Response('{"status": 401, "code": "Unauthenticated"}', { status: 401 });
      }),
    );
    signIn(KEY);
    const pending = api('/buses').catch((e: unknown) => e);
    signIn(OTHER);
    release();
    expect(await pending).toBeInstanceOf(ApiError);
    expect(keyOf()).toBe(OTHER);
  });

  it.each([
    { name: '403', status: 403, body: { status: 403, code: 'Forbidden', detail: 'role viewer lacks resources.write' }, text: 'Role viewer lacks resources.write.' },
    { name: '404', status: 404, body: { status: 404, code: 'AccountNotFound', detail: 'account "nosuch" does not exist' }, text: 'Account "nosuch" does not exist.' },
    { name: '500 without a document', status: 500, body: undefined, text: 'The server failed.' },
  ])('keeps the session on a $name and renders the problem as before', async ({ status, body, text }) => {
    answer(status, body);
    signIn(KEY);
    const err = await api('/buses').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe(text);
    expect(keyOf()).toBe(KEY);
  });
});

describe('checkApiKey', () => {
  it('asks /me with the key typed, without the session’s account', async () => {
    answer(200, { kind: 'apiKey', name: 'bootstrap-admin', account: 'default', role: 'admin', instanceAdmin: true });
    signIn(KEY);
    chooseAccount('shop');
    const me = await checkApiKey(OTHER);
    expect(me.name).toBe('bootstrap-admin');
    expect(calls[0].url).toBe('/api/v1/me');
    expect(calls[0].headers.Authorization).toBe(`Bearer ${OTHER}`);
    expect(calls[0].headers).not.toHaveProperty('X-Account-Id');
    expect(keyOf()).toBe(KEY);
  });

  it('does not end the current session when the key typed is refused', async () => {
    answer(401, { status: 401, code: 'Unauthenticated' });
    signIn(KEY);
    await expect(checkApiKey(OTHER)).rejects.toMatchObject({ status: 401 });
    expect(keyOf()).toBe(KEY);
  });
});
