import { requestHeaders } from '../api/client';
import { ApiError, isProblem, parseRetryAfter } from '../api/problem';
import { credentialRefused, session } from '../api/session';
import { sseParser } from './sse';
import type { StoredEvent } from './tail';

/** TailHandlers receive what a tail sends, in order. */
export interface TailHandlers {
  /** ready: the tail listens; every matching event stored from now on is sent. */
  ready(): void;
  event(e: StoredEvent): void;
  /** skipped: n matching events were not sent, over the tail's rate; the next event follows. */
  skipped(n: number): void;
}

/**
 * streamTail opens the tail of bus (GET /api/v1/buses/{bus}/tail, docs/events.md) with query and calls on for each
 * of its events until the stream ends. It reads the stream with fetch, not EventSource, which cannot send the
 * headers the API client sends for a GET (requestHeaders: an API key, X-Account-Id); the browser sends the session
 * cookie (same origin).
 *
 * It resolves when the server ends the stream; it rejects with ApiError when the server refuses the tail (429
 * TooManyTails with its Retry-After, 400 for a bad filter; a 401 also ends the session, as the API client's does),
 * with TypeError when the connection fails, with an Error when the answer is not an event stream, and with the
 * AbortError of signal once it is aborted, which is how the caller stops it.
 */
export async function streamTail(bus: string, query: Record<string, string | undefined>, on: TailHandlers, signal: AbortSignal): Promise<void> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const url = `/api/v1/buses/${encodeURIComponent(bus)}/tail` + (q.size > 0 ? '?' + q.toString() : '');
  const { credential, account } = session();
  const headers = { ...requestHeaders(credential, account, 'GET'), Accept: 'text/event-stream, application/problem+json' };
  const res = await fetch(url, { headers, credentials: 'same-origin', cache: 'no-store', signal });
  if (!res.ok) {
    const text = await res.text();
    let data: unknown = text;
    try {
      data = JSON.parse(text);
    } catch {
      /* not JSON: the text is the detail */
    }
    if (res.status === 401) credentialRefused(credential);
    throw new ApiError(
      res.status,
      isProblem(data) ? data : { status: res.status, detail: typeof data === 'string' && data !== '' ? data : undefined },
      parseRetryAfter(res.headers.get('Retry-After')),
    );
  }
  // A server without tails answers the console's page for an unknown path: say so rather than wait for events.
  if (!res.body || !(res.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    throw new Error('the server did not answer an event stream; is it older than the console?');
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = sseParser();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    for (const ev of parser.push(value)) {
      if (ev.type === 'ready') on.ready();
      else if (ev.type === 'event') on.event(JSON.parse(ev.data) as StoredEvent);
      else if (ev.type === 'skipped') on.skipped(Number((JSON.parse(ev.data) as { skipped?: number }).skipped ?? 0));
    }
  }
}
