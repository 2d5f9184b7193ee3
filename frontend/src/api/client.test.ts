import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api, checkApiKey, requestHeaders } from './client';
import { ApiError } from './problem';
import { chooseAccount, refusedNotice, session, signIn, signOut, subscribe } from './session';

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

const KEY = 'ebk_aaaaaaaaaaaaaaaa_secret';
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
    const h = requestHeaders(key, account);
    expect(h.Authorization).toBe(auth);
    expect(h['X-Account-Id']).toBe(acct);
    expect('Authorization' in h).toBe(auth !== undefined);
    expect('X-Account-Id' in h).toBe(acct !== undefined);
  });
});

describe('api', () => {
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
    expect(session()).toEqual({ key: undefined, account: undefined, notice: refusedNotice });
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
    expect(session().key).toBe(OTHER);
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
    expect(session().key).toBe(KEY);
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
    expect(session().key).toBe(KEY);
  });

  it('does not end the current session when the key typed is refused', async () => {
    answer(401, { status: 401, code: 'Unauthenticated' });
    signIn(KEY);
    await expect(checkApiKey(OTHER)).rejects.toMatchObject({ status: 401 });
    expect(session().key).toBe(KEY);
  });
});
