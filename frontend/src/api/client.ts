import { ApiError, isProblem, parseRetryAfter } from './problem';
import type { components } from './schema';
import { credentialRefused, resumeSession, sameCredential, session, sessionEndedNotice, signOut, type Credential } from './session';

export type Schemas = components['schemas'];
export type Bus = Schemas['Bus'];
export type Rule = Schemas['Rule'];
export type Target = Schemas['Target'];
export type Source = Schemas['Source'];
export type RuntimePlugin = Schemas['RuntimePlugin'];
export type RuntimeConnector = Schemas['RuntimeConnector'];
export type RuntimeWorker = Schemas['RuntimeWorker'];
export type PutEventsResponse = Schemas['PutEventsResponse'];
export type TestEventPatternOutput = Schemas['TestEventPatternOutput'];
export type Me = Schemas['Me'];
export type Account = Schemas['Account'];
/** UserSession is a user's console session as the API answers it (csrfToken on the current one only). */
export type UserSession = Schemas['Session'];
export type SessionList = Schemas['SessionList'];
export type SignInBody = Schemas['SignIn'];
export type PasswordChange = Schemas['PasswordChange'];

// Methods that change nothing (RFC 9110): the server wants no CSRF token on them.
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * requestHeaders are the headers of a request: an API key as a bearer token; for a user's session (whose cookie the
 * browser sends by itself) the session's CSRF token in X-CSRF-Token on every method that changes something; and
 * X-Account-Id only when the user picked an account (without it the control plane acts in the credential's own).
 */
export function requestHeaders(credential: Credential | undefined, account: string | undefined, method = 'GET'): Record<string, string> {
  const h: Record<string, string> = { Accept: 'application/json, application/problem+json' };
  if (credential?.kind === 'apiKey') h.Authorization = `Bearer ${credential.key}`;
  else if (credential?.kind === 'session' && !safeMethods.has(method.toUpperCase())) h['X-CSRF-Token'] = credential.csrfToken;
  if (account) h['X-Account-Id'] = account;
  return h;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** rawBody is sent as it is, with contentType. */
  rawBody?: string;
  contentType?: string;
  query?: Record<string, string | number | undefined>;
  /** apiKey replaces the session's credential (and drops its account): the sign-in screen checks a key with it. */
  apiKey?: string;
  /**
   * anonymous sends none of the console's credentials (no key, no CSRF token, no account): signing in, and asking
   * for the session after a reload. The browser still sends its cookie.
   */
  anonymous?: boolean;
}

/**
 * api calls the control plane's REST API under /api/v1 and returns the decoded answer; it throws ApiError (and
 * TypeError when the server cannot be reached). A 401 answer to a request made with the session's credential also
 * ends the session (session.ts), which brings the sign-in screen. A change that a user's session made and that
 * the server refused for its CSRF token is sent once more with the token the cookie holds now (see renewToken).
 */
export function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  return request<T>(path, opts, true);
}

async function request<T>(path: string, opts: RequestOptions, mayRenew: boolean): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    if (v !== undefined && v !== '') q.set(k, String(v));
  }
  const url = '/api/v1' + path + (q.size > 0 ? '?' + q.toString() : '');
  const s = session();
  const own = opts.apiKey === undefined && !opts.anonymous;
  const credential: Credential | undefined = opts.apiKey !== undefined ? { kind: 'apiKey', key: opts.apiKey } : own ? s.credential : undefined;
  let body: string | undefined;
  let contentType: string | undefined;
  if (opts.rawBody !== undefined) {
    body = opts.rawBody;
    contentType = opts.contentType ?? 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    contentType = 'application/json';
  }
  const method = opts.method ?? (body !== undefined ? 'POST' : 'GET');
  const headers = requestHeaders(credential, own ? s.account : undefined, method);
  if (contentType) headers['Content-Type'] = contentType;
  // Same-origin requests send the session cookie (the fetch default, said here because sign-in depends on it).
  const res = await fetch(url, { method, headers, body, credentials: 'same-origin' });
  const text = await res.text();
  let data: unknown = undefined;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const err = new ApiError(
      res.status,
      isProblem(data) ? data : { status: res.status, detail: typeof data === 'string' ? data : undefined },
      parseRetryAfter(res.headers.get('Retry-After')),
    );
    if (res.status === 401) credentialRefused(credential);
    else if (mayRenew && own && credential?.kind === 'session' && err.problem.code === 'CrossSiteRequestRefused' && (await renewToken(credential))) {
      return request<T>(path, opts, false);
    }
    throw err;
  }
  return data as T;
}

/**
 * renewToken is called when the server refused a change made with the session used for its CSRF token. A browser
 * has one session cookie for every tab: when another tab signed in again, the cookie is a new session and this
 * tab's token is stale. renewToken asks GET /api/v1/session which session the cookie holds now and reports
 * whether the request may be sent again: yes when it is the same user's with another token (kept from now on).
 * When the cookie holds no live session the console signs out (the session ended); when it holds another user's,
 * it signs out saying so, rather than act as someone else.
 */
async function renewToken(used: Credential & { kind: 'session' }): Promise<boolean> {
  let now: UserSession;
  try {
    now = await api<UserSession>('/session', { anonymous: true });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401 && sameCredential(used, session().credential)) signOut(sessionEndedNotice);
    return false;
  }
  if (!sameCredential(used, session().credential) || !now.csrfToken || now.csrfToken === used.csrfToken) return false;
  if (now.username !== used.username) {
    signOut(`This browser signed in as ${now.username ?? 'another user'} in another tab or window; sign in again.`);
    return false;
  }
  resumeSession(used.username, now.csrfToken);
  return true;
}

/** checkApiKey asks the control plane who key is (GET /api/v1/me) without touching the session. */
export function checkApiKey(key: string): Promise<Me> {
  return api<Me>('/me', { apiKey: key });
}

/** listAccounts reads every account (instance administrators only), 500 a page. */
export async function listAccounts(): Promise<Account[]> {
  const out: Account[] = [];
  let nextToken: string | undefined;
  // At most 20 pages: a console selector with more than 10,000 accounts would be of no use anyway.
  for (let page = 0; page < 20; page++) {
    const d = await api<Schemas['AccountList']>('/accounts', { query: { limit: 500, nextToken } });
    out.push(...(d.accounts ?? []));
    nextToken = d.nextToken;
    if (!nextToken) break;
  }
  return out;
}

export const enc = encodeURIComponent;
