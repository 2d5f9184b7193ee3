import type { components } from './schema';

export type Problem = components['schemas']['Problem'];

/** ApiError is thrown by the API client for every answer that is not 2xx. */
export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  /** retryAfter is the answer's Retry-After in seconds (429, 503), when it has one. */
  readonly retryAfter?: number;
  constructor(status: number, problem: Problem, retryAfter?: number) {
    super(problemText(problem, status));
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

/**
 * parseRetryAfter reads a Retry-After header (RFC 9110: delay-seconds or an HTTP date) as whole seconds from now;
 * undefined when there is none or it does not parse.
 */
export function parseRetryAfter(v: string | null | undefined, now = Date.now()): number | undefined {
  const s = v?.trim();
  if (!s) return undefined;
  if (/^\d+$/.test(s)) return Number(s);
  // An HTTP date names its day and month ("Sun, 06 Nov 1994 08:49:37 GMT"); Date.parse would also take "-3".
  const t = /^[A-Za-z]{3},/.test(s) ? Date.parse(s) : NaN;
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, Math.ceil((t - now) / 1000));
}

/** waitText says a number of seconds in words: "1 second", "45 seconds", "2 minutes", "1 minute 30 seconds". */
export function waitText(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  const unit = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  if (s < 60) return unit(s, 'second');
  const m = Math.floor(s / 60);
  const rest = s % 60;
  return rest === 0 ? unit(m, 'minute') : `${unit(m, 'minute')} ${unit(rest, 'second')}`;
}

/** isProblem reports whether v looks like an RFC 9457 problem document. */
export function isProblem(v: unknown): v is Problem {
  return typeof v === 'object' && v !== null && ('detail' in v || 'title' in v || 'code' in v);
}

const statusWords: Record<number, string> = {
  400: 'The request was not accepted',
  401: 'You are not signed in',
  403: 'You may not do this',
  404: 'It does not exist',
  409: 'It conflicts with what exists',
  413: 'The request is too large',
  422: 'The request was not accepted',
  429: 'Too many requests; try again shortly',
  500: 'The server failed',
  502: 'The server could not reach a component it needs',
  503: 'The service is unavailable; try again shortly',
  504: 'The server timed out',
};

/**
 * problemText renders a problem document in plain words: the detail (which says what went wrong), the field it
 * names when the detail does not mention it, and a sentence for the status when there is no detail.
 */
export function problemText(p: Problem | undefined, status?: number): string {
  const st = p?.status ?? status;
  const detail = p?.detail?.trim();
  let text = detail && detail.length > 0 ? detail : (st !== undefined && statusWords[st]) || p?.title || 'Something went wrong';
  // A plain first word is capitalised; a leading field path (config.url: ...) is kept as written.
  if (/^[a-z]+\s/.test(text)) text = text.charAt(0).toUpperCase() + text.slice(1);
  if (p?.field && !text.toLowerCase().includes(p.field.toLowerCase())) {
    text += ` (field: ${p.field})`;
  }
  if (!/[.!?]$/.test(text)) text += '.';
  return text;
}

/** errorText renders any error thrown while talking to the API. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return 'The server cannot be reached: ' + err.message + '.';
  if (err instanceof Error) return err.message;
  return String(err);
}
