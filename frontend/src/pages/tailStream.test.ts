import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/problem';
import { chooseAccount, session, sessionEndedNotice, signInWithKey, signInWithSession, signOut } from '../api/session';
import type { StoredEvent } from './tail';
import { streamTail, type TailHandlers } from './tailStream';

// fetch is the browser boundary: a stub answers with a body the test writes chunk by chunk, as a server streams.

interface Seen {
  url: string;
  init: RequestInit;
}

/** Stream is the body of a streamed answer: the test writes chunks (bytes cut anywhere) and ends it. */
interface Stream {
  write(text: string | Uint8Array): void;
  end(): void;
}

function streaming(headers: Record<string, string> = { 'Content-Type': 'text/event-stream' }): { seen: Seen[]; stream: Stream } {
  const seen: Seen[] = [];
  let ctrl!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (ctrl = c) });
  const bytes = new TextEncoder();
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      // An aborted request rejects, as the browser's fetch does, and so does reading its body.
      init.signal?.addEventListener('abort', () => ctrl.error(init.signal!.reason));
      return new Response(body, { status: 200, headers });
    }),
  );
  return { seen, stream: { write: (t) => ctrl.enqueue(typeof t === 'string' ? bytes.encode(t) : t), end: () => ctrl.close() } };
}

function answering(status: number, body: string, headers: Record<string, string> = {}) {
  vi.stubGlobal('fetch', vi.fn(async () => new Response(body, { status, headers: { 'Content-Type': 'application/problem+json', ...headers } })));
}

/** recorder collects what a tail sends, in order. */
function recorder(): { got: string[]; on: TailHandlers } {
  const got: string[] = [];
  return {
    got,
    on: {
      ready: () => got.push('ready'),
      event: (e: StoredEvent) => got.push(`event ${e.sequence} ${(e.event as { id?: string }).id}`),
      skipped: (n) => got.push(`skipped ${n}`),
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

beforeEach(() => signOut());
afterEach(() => vi.unstubAllGlobals());

describe('streamTail', () => {
  it('asks for the tail with the filter and the headers the API client sends for a GET', async () => {
    signInWithSession('alice', 'csrf-1');
    chooseAccount('shop');
    const { seen, stream } = streaming();
    stream.end();
    const abort = new AbortController();
    await streamTail('my orders', { type: 'order.created', source: undefined, subject: '', pattern: '{"a": [1]}' }, recorder().on, abort.signal);
    expect(seen).toHaveLength(1);
    expect(seen[0].url).toBe('/api/v1/buses/my%20orders/tail?type=order.created&pattern=%7B%22a%22%3A+%5B1%5D%7D');
    const h = seen[0].init.headers as Record<string, string>;
    expect(h['X-Account-Id']).toBe('shop');
    expect(h.Accept).toBe('text/event-stream, application/problem+json');
    expect(h).not.toHaveProperty('X-CSRF-Token'); // a read
    expect(h).not.toHaveProperty('Authorization'); // the browser sends the session's cookie
    expect(seen[0].init.credentials).toBe('same-origin');
    expect(seen[0].init.signal).toBe(abort.signal);
  });

  it('sends an API key as a bearer token', async () => {
    signInWithKey('ebk_aaaaaaaaaaaaaaaa_secret');
    const { seen, stream } = streaming();
    stream.end();
    await streamTail('orders', {}, recorder().on, new AbortController().signal);
    expect((seen[0].init.headers as Record<string, string>).Authorization).toBe('Bearer ebk_aaaaaaaaaaaaaaaa_secret');
    expect(seen[0].url).toBe('/api/v1/buses/orders/tail');
  });

  it('passes on ready, events and skipped counts as they come, chunks cut anywhere, and resolves at the end', async () => {
    signInWithKey('k');
    const { stream } = streaming();
    const { got, on } = recorder();
    const done = streamTail('orders', {}, on, new AbortController().signal);
    stream.write('event: ready\ndata: {}\n\n');
    await tick();
    expect(got).toEqual(['ready']);
    stream.write('event: event\nid: 8\ndata: {"sequence":8,"storedAt":"2026-12-01T09:15:00Z","ev');
    await tick();
    expect(got).toEqual(['ready']);
    stream.write('ent":{"id":"42"}}\n\n: keep-alive\n\nevent: skipped\r\ndata: {"skipped":12}\r\n\r\n');
    // A character of several bytes cut in two by the network: the decoder joins it.
    const e = new TextEncoder().encode('event: event\nid: 9\ndata: {"sequence":9,"event":{"id":"é"}}\n\n');
    const at = e.indexOf(0xc3) + 1;
    stream.write(e.slice(0, at));
    stream.write(e.slice(at));
    stream.write('event: event\nid: 10\ndata: {"sequence":10}\n'); // no blank line: never complete
    stream.end();
    await done;
    expect(got).toEqual(['ready', 'event 8 42', 'skipped 12', 'event 9 é']);
  });

  it('rejects with the problem and when to retry on 429', async () => {
    signInWithKey('k');
    answering(429, '{"status":429,"code":"TooManyTails","detail":"5 tails are open"}', { 'Retry-After': '30' });
    const err = await streamTail('orders', {}, recorder().on, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 429, retryAfter: 30, problem: { code: 'TooManyTails' } });
  });

  it('rejects with the problem of a bad pattern', async () => {
    signInWithKey('k');
    answering(400, '{"status":400,"code":"InvalidEventPattern","field":"pattern","detail":"pattern: type must be an array"}');
    const err = await streamTail('orders', { pattern: '{"type":"x"}' }, recorder().on, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, problem: { field: 'pattern' } });
    expect(session().credential).toBeDefined();
  });

  it('ends the session on 401, as every request of the console does', async () => {
    signInWithSession('alice', 'csrf-1');
    answering(401, '{"status":401,"code":"Unauthenticated"}');
    const err = await streamTail('orders', {}, recorder().on, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401 });
    expect(session()).toMatchObject({ credential: undefined, notice: sessionEndedNotice });
  });

  it('says so when the answer is not an event stream', async () => {
    signInWithKey('k');
    const { stream } = streaming({ 'Content-Type': 'text/html' });
    stream.write('<!doctype html>');
    await expect(streamTail('orders', {}, recorder().on, new AbortController().signal)).rejects.toThrow(/did not answer an event stream/);
  });

  it('stops when aborted, with nothing passed on after', async () => {
    signInWithKey('k');
    const { stream } = streaming();
    const { got, on } = recorder();
    const abort = new AbortController();
    const done = streamTail('orders', {}, on, abort.signal).catch((e: unknown) => e);
    stream.write('event: ready\ndata: {}\n\n');
    await tick();
    abort.abort();
    const err = await done;
    expect((err as Error).name).toBe('AbortError');
    expect(got).toEqual(['ready']);
  });
});
