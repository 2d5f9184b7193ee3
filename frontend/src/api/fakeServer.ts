import { vi } from 'vitest';

// A fake of the browser's fetch for unit tests: fetch is the console's process boundary. Only tests import it.

/** Request is what the console sent: the method, the path under the origin, its headers and body. */
export interface Request {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  credentials?: RequestCredentials;
}

/** Answer is what the fake server answers: a status, a body (JSON unless a string) and headers. */
export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * serve stubs fetch with handler (a fixed answer, or a function of the request) and returns the requests it saw.
 * vi.unstubAllGlobals() restores the real fetch.
 */
export function serve(handler: Answer | ((r: Request) => Answer | Promise<Answer>)): Request[] {
  const seen: Request[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const r: Request = {
        url,
        method: init.method ?? 'GET',
        headers: { ...(init.headers as Record<string, string>) },
        body: typeof init.body === 'string' ? init.body : undefined,
        credentials: init.credentials,
      };
      seen.push(r);
      const a = typeof handler === 'function' ? await handler(r) : handler;
      const text = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
      const noBody = a.status === 204 || text === '';
      return new Response(noBody ? null : text, {
        status: a.status,
        headers: { 'Content-Type': a.status >= 400 ? 'application/problem+json' : 'application/json', ...a.headers },
      });
    }),
  );
  return seen;
}
