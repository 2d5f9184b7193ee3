import { ApiError, isProblem } from './problem';
import type { components } from './schema';

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

/** account is the X-Account-Id every request carries; the console keeps it in localStorage. */
export function account(): string {
  return (typeof localStorage !== 'undefined' && localStorage.getItem('eb.account')) || 'default';
}

export function setAccount(a: string) {
  localStorage.setItem('eb.account', a || 'default');
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** rawBody is sent as it is, with contentType. */
  rawBody?: string;
  contentType?: string;
  query?: Record<string, string | number | undefined>;
}

/** api calls the control plane's REST API under /api/v1 and returns the decoded answer; it throws ApiError. */
export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    if (v !== undefined && v !== '') q.set(k, String(v));
  }
  const url = '/api/v1' + path + (q.size > 0 ? '?' + q.toString() : '');
  const headers: Record<string, string> = { 'X-Account-Id': account(), Accept: 'application/json, application/problem+json' };
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
    throw new ApiError(res.status, isProblem(data) ? data : { status: res.status, detail: typeof data === 'string' ? data : undefined });
  }
  return data as T;
}

export const enc = encodeURIComponent;
