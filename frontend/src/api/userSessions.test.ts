import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serve } from './fakeServer';
import { ApiError } from './problem';
import { noSession, session, sessionEndedNotice, signInWithKey, signInWithSession, signOut } from './session';
import {
  changePassword,
  checkPasswordChange,
  checkSession,
  createSession,
  endSession,
  passwordChangedNotice,
  passwordChangeError,
  passwordSignInError,
  revokedNotice,
  revokeSession,
  signedOutNotice,
} from './userSessions';

const TOKEN = 'csrf-token-1';
const unauthenticated = { status: 401, body: { status: 401, code: 'Unauthenticated', detail: 'missing or invalid credentials' } };

beforeEach(() => {
  signOut();
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('createSession', () => {
  it('posts the name and password as JSON without credentials and answers the CSRF token', async () => {
    const seen = serve({ status: 201, body: { id: 's1', username: 'admin', current: true, csrfToken: TOKEN } });
    const s = await createSession('admin', 'pw-123456');
    expect(s.csrfToken).toBe(TOKEN);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ url: '/api/v1/session', method: 'POST', credentials: 'same-origin' });
    expect(JSON.parse(seen[0].body ?? '')).toEqual({ username: 'admin', password: 'pw-123456' });
    expect(seen[0].headers['Content-Type']).toBe('application/json');
    expect(seen[0].headers).not.toHaveProperty('Authorization');
    expect(seen[0].headers).not.toHaveProperty('X-CSRF-Token');
    expect(session().credential).toBeUndefined(); // the sign-in screen keeps it
  });

  it('refuses an answer without a CSRF token', async () => {
    serve({ status: 201, body: { id: 's1', username: 'admin' } });
    await expect(createSession('admin', 'pw')).rejects.toThrow(/CSRF token/);
  });
});

describe('passwordSignInError', () => {
  const tooMany = (retryAfter?: number) =>
    new ApiError(429, { status: 429, code: 'TooManySignInAttempts', detail: 'too many failed sign-ins for this user name from this address; try again in 4s' }, retryAfter);
  it.each([
    { name: 'wrong name or password', err: new ApiError(401, { status: 401, code: 'Unauthenticated', detail: 'invalid user name or password' }), want: 'Invalid user name or password.' },
    { name: 'throttled, seconds', err: tooMany(4), want: 'Too many failed sign-ins for this user name from this address. Wait 4 seconds before you try again.' },
    { name: 'throttled, minutes', err: tooMany(150), want: 'Too many failed sign-ins for this user name from this address. Wait 2 minutes 30 seconds before you try again.' },
    { name: 'throttled without Retry-After', err: tooMany(), want: 'Too many failed sign-ins for this user name from this address. Too many failed sign-ins for this user name from this address; try again in 4s.' },
    {
      name: 'another site',
      err: new ApiError(403, { status: 403, code: 'CrossSiteRequestRefused', detail: 'this request comes from the origin "http://evil.example", not from this server\'s' }),
      want: 'The server refused this sign-in as coming from another site: This request comes from the origin "http://evil.example", not from this server\'s. Open the console at the address the server is configured with (--public-url).',
    },
    { name: 'no server', err: new TypeError('Failed to fetch'), want: 'The server cannot be reached: Failed to fetch.' },
    { name: 'sessions off', err: new ApiError(503, { status: 503, detail: 'this server does not sign users in' }), want: 'This server does not sign users in.' },
  ])('$name', ({ err, want }) => {
    expect(passwordSignInError(err)).toBe(want);
  });
});

describe('checkSession', () => {
  // A reload: fresh modules (the page's memory is gone) over the tab's sessionStorage.
  async function reload(stored: Record<string, string>) {
    const m = new Map(Object.entries(stored));
    vi.stubGlobal('sessionStorage', { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), removeItem: (k: string) => void m.delete(k) });
    vi.resetModules();
    return { store: await import('./session'), sessions: await import('./userSessions') };
  }

  it('after a reload, resumes the browser’s session with its token, and the account this tab had picked', async () => {
    const { store, sessions } = await reload({ 'eb.account': 'shop' });
    expect(store.session()).toMatchObject({ credential: undefined, checking: true });
    const seen = serve({ status: 200, body: { id: 's1', username: 'admin', current: true, csrfToken: TOKEN } });
    await sessions.checkSession();
    expect(seen[0]).toMatchObject({ url: '/api/v1/session', method: 'GET' });
    expect(seen[0].headers).not.toHaveProperty('Authorization');
    expect(store.session()).toMatchObject({ credential: { kind: 'session', username: 'admin', csrfToken: TOKEN }, account: 'shop', checking: false });
  });

  it('after a reload, uses the tab’s API key without asking', async () => {
    const { store } = await reload({ 'eb.apiKey': 'ebk_aaaaaaaaaaaaaaaa_secret', 'eb.account': 'shop' });
    expect(store.session()).toMatchObject({ credential: { kind: 'apiKey', key: 'ebk_aaaaaaaaaaaaaaaa_secret' }, account: 'shop', checking: false });
  });

  it('shows the sign-in screen, without a notice, when the browser has no session (401)', async () => {
    serve(unauthenticated);
    await checkSession();
    expect(session()).toMatchObject({ credential: undefined, notice: undefined, checking: false });
  });

  it('says so when it cannot check', async () => {
    serve({ status: 503, body: { status: 503 } });
    await checkSession();
    expect(session()).toMatchObject({ credential: undefined, checking: false });
    expect(session().notice).toMatch(/^Could not check whether you are signed in: The service is unavailable/);
  });

  it('asks once for calls made while it asks', async () => {
    const seen = serve({ status: 200, body: { username: 'admin', csrfToken: TOKEN } });
    await Promise.all([checkSession(), checkSession()]);
    expect(seen).toHaveLength(1);
  });
});

describe('endSession', () => {
  it('ends a user’s session on the server with the CSRF token, then signs out', async () => {
    signInWithSession('admin', TOKEN);
    const seen = serve({ status: 204 });
    await endSession();
    expect(seen.map((r) => `${r.method} ${r.url} ${r.headers['X-CSRF-Token']}`)).toEqual([`DELETE /api/v1/session ${TOKEN}`]);
    expect(session()).toMatchObject({ credential: undefined, notice: signedOutNotice, method: 'password' });
  });

  it('signs out when the session had already ended', async () => {
    signInWithSession('admin', TOKEN);
    serve(unauthenticated);
    await endSession();
    expect(session()).toMatchObject({ credential: undefined, notice: signedOutNotice });
  });

  it('stays signed in when the server could not end the session', async () => {
    signInWithSession('admin', TOKEN);
    serve({ status: 500, body: { status: 500 } });
    await expect(endSession()).rejects.toBeInstanceOf(ApiError);
    expect(session().credential).toMatchObject({ kind: 'session', csrfToken: TOKEN });
  });

  it('only forgets an API key', async () => {
    signInWithKey('ebk_aaaaaaaaaaaaaaaa_secret');
    const seen = serve({ status: 500 });
    await endSession();
    expect(seen).toHaveLength(0);
    expect(session()).toMatchObject({ credential: undefined, notice: signedOutNotice, method: 'apiKey' });
  });
});

describe('revokeSession', () => {
  beforeEach(() => signInWithSession('admin', TOKEN));

  it('ends another session and stays signed in', async () => {
    const seen = serve({ status: 204 });
    await revokeSession({ id: 'other/1', current: false });
    expect(seen.map((r) => `${r.method} ${r.url} ${r.headers['X-CSRF-Token']}`)).toEqual([`DELETE /api/v1/me/sessions/other%2F1 ${TOKEN}`]);
    expect(session().credential).toMatchObject({ kind: 'session' });
  });

  it('signs out after ending this browser’s session', async () => {
    serve({ status: 204 });
    await revokeSession({ id: 's1', current: true });
    expect(session()).toMatchObject({ credential: undefined, notice: revokedNotice });
  });
});

describe('changePassword', () => {
  beforeEach(() => signInWithSession('admin', TOKEN));

  it('sends both passwords with the CSRF token, then signs out: every session ended', async () => {
    const seen = serve({ status: 204 });
    await changePassword('old-password', 'new-password');
    expect(seen[0]).toMatchObject({ url: '/api/v1/me/password', method: 'PUT' });
    expect(seen[0].headers['X-CSRF-Token']).toBe(TOKEN);
    expect(JSON.parse(seen[0].body ?? '')).toEqual({ currentPassword: 'old-password', newPassword: 'new-password' });
    expect(session()).toMatchObject({ credential: undefined, notice: passwordChangedNotice });
  });

  it('stays signed in when the current password is wrong, and says so on its field', async () => {
    serve({ status: 403, body: { status: 403, code: 'Forbidden', detail: 'the current password is wrong', field: 'currentPassword' } });
    const err = await changePassword('wrong-password', 'new-password').catch((e: unknown) => e);
    expect(session().credential).toMatchObject({ kind: 'session' });
    expect(passwordChangeError(err)).toEqual({ currentPassword: 'The current password is wrong.' });
  });

  it('signs out saying the session ended when it had (401)', async () => {
    serve(unauthenticated);
    await expect(changePassword('old-password', 'new-password')).rejects.toMatchObject({ status: 401 });
    expect(session()).toMatchObject({ credential: undefined, notice: sessionEndedNotice });
  });
});

describe('passwordChangeError', () => {
  it.each([
    { name: 'too short', err: new ApiError(400, { status: 400, code: 'ValidationError', detail: 'password must be at least 8 characters long', field: 'password' }), want: { newPassword: 'Password must be at least 8 characters long.' } },
    { name: 'unchanged', err: new ApiError(400, { status: 400, code: 'ValidationError', detail: 'the new password is the current one', field: 'newPassword' }), want: { newPassword: 'The new password is the current one.' } },
    { name: 'another site', err: new ApiError(403, { status: 403, code: 'CrossSiteRequestRefused', detail: 'no token' }), want: { form: 'No token.' } },
    { name: 'no server', err: new TypeError('Failed to fetch'), want: { form: 'The server cannot be reached: Failed to fetch.' } },
  ])('$name', ({ err, want }) => {
    expect(passwordChangeError(err)).toEqual(want);
  });
});

describe('checkPasswordChange', () => {
  it.each([
    { name: 'fine', c: 'old-password', n: 'new-password', r: 'new-password', want: {} },
    { name: 'no current password', c: '', n: 'new-password', r: 'new-password', want: { currentPassword: 'Enter your current password.' } },
    { name: 'too short', c: 'old-password', n: 'short', r: 'short', want: { newPassword: 'A password has at least 8 characters.' } },
    { name: 'the same', c: 'old-password', n: 'old-password', r: 'old-password', want: { newPassword: 'The new password is the current one.' } },
    { name: 'repeated differently', c: 'old-password', n: 'new-password', r: 'new-passwort', want: { repeat: 'The two new passwords differ.' } },
  ])('$name', ({ c, n, r, want }) => {
    expect(checkPasswordChange(c, n, r)).toEqual(want);
  });
});

describe('noSession', () => {
  it('keeps a credential that came meanwhile', () => {
    signInWithSession('admin', TOKEN);
    noSession('nothing');
    expect(session().credential).toMatchObject({ kind: 'session' });
  });
});
