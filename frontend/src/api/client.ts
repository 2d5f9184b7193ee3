import { ApiError, isProblem } from './problem';
import type { components } from './schema';
import { keyRefused, session } from './session';

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

/**
 * requestHeaders are the headers of every request: the API key as a bearer token, and X-Account-Id only when the
 * user picked an account (without it the control plane acts in the key's own account).
 */
export function requestHeaders(key: string | undefined, account: string | undefined): Record<string, string> {
  const h: Record<string, string> = { Accept: 'application/json, application/problem+json' };
  if (key) h.Authorization = `Bearer ${key}`;
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
  /** apiKey replaces the session's key (and drops its account): the sign-in screen checks a key with it. */
  apiKey?: string;
}

/**
 * api calls the control plane's REST API under /api/v1 and returns the decoded answer; it throws ApiError (and
 * TypeError when the server cannot be reached). A 401 answer to a request made with the session's key also ends
 * the session (session.ts), which brings the sign-in screen.
 */
export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    if (v !== undefined && v !== '') q.set(k, String(v));
  }
  const url = '/api/v1' + path + (q.size > 0 ? '?' + q.toString() : '');
  const s = session();
  const key = opts.apiKey ?? s.key;
  const headers = requestHeaders(key, opts.apiKey !== undefined ? undefined : s.account);
  let body: string | undefined;
  if (opts.rawBody !== undefined) {
    body = opts.rawBody;
    headers['Content-Type'] = opts.contentType ?? 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(url, { method: opts.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body });
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
    if (res.status === 401) keyRefused(key);
    throw new ApiError(res.status, isProblem(data) ? data : { status: res.status, detail: typeof data === 'string' ? data : undefined });
  }
  return data as T;
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
