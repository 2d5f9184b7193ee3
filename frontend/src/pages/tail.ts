import { ApiError } from '../api/problem';
import type { components } from '../api/schema';
import { checkPattern, type PatternProblem } from '../builder/patternCheck';

/*
 * The live tail of a bus (docs/events.md "Tail a bus"): its filter, kept in the page's address and turned into the
 * query of GET /api/v1/buses/{bus}/tail; the events it shows (the last ones, newest first, frozen while paused); the
 * rate they arrive at and how many the server left out; and its status in words. Pure: no React here; times are
 * passed in.
 */

export type StoredEvent = components['schemas']['StoredEvent'];

/** TAIL_KEEP is how many events the page keeps: the newest; older ones leave the list as new ones come. */
export const TAIL_KEEP = 500;
/** RATE_WINDOW_MS is the span the rate is measured over. */
export const RATE_WINDOW_MS = 5_000;
/** TAIL_MAX_RATE is how many events a second a tail sends at most (the server's limit). */
export const TAIL_MAX_RATE = 100;
/** MAX_TAILS is how many tails an account may have open at once (per control-plane replica). */
export const MAX_TAILS = 5;

// ---------------------------------------------------------------------------------------------------------------
// Filter

/** TailFilter selects the events a tail sends: exact type, source and subject, and an event pattern (JSON text). */
export interface TailFilter {
  type: string;
  source: string;
  subject: string;
  pattern: string;
}

const FIELDS = ['type', 'source', 'subject', 'pattern'] as const;

export const emptyFilter: TailFilter = { type: '', source: '', subject: '', pattern: '' };

/** filterFromSearch reads the filter from the page's address; what is missing is empty. */
export function filterFromSearch(sp: URLSearchParams): TailFilter {
  const f = { ...emptyFilter };
  for (const k of FIELDS) f[k] = sp.get(k) ?? '';
  return f;
}

/** filterToSearch writes the filter into an address's query, trimmed, empty fields left out (filterFromSearch's inverse). */
export function filterToSearch(f: TailFilter): URLSearchParams {
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(tailQuery(f))) if (v !== undefined) sp.set(k, v);
  return sp;
}

/** tailQuery is the query of GET /api/v1/buses/{bus}/tail for the filter: trimmed, empty fields undefined. */
export function tailQuery(f: TailFilter): Record<(typeof FIELDS)[number], string | undefined> {
  const q = { type: undefined, source: undefined, subject: undefined, pattern: undefined } as Record<(typeof FIELDS)[number], string | undefined>;
  for (const k of FIELDS) q[k] = f[k].trim() || undefined;
  return q;
}

/**
 * patternProblems are the problems of the filter's pattern, checked as a rule's before the tail connects (the
 * server would refuse it with a 400); none when it has no pattern, which matches every event.
 */
export function patternProblems(f: TailFilter): PatternProblem[] {
  return f.pattern.trim() === '' ? [] : checkPattern(f.pattern);
}

// ---------------------------------------------------------------------------------------------------------------
// Events shown, rate, skipped

/** Arrival is an event as the page received it, with when (ms since the epoch). */
export interface Arrival {
  event: StoredEvent;
  at: number;
}

/** TailView is what the page shows of a tail's events. */
export interface TailView {
  /** events are the last TAIL_KEEP events received, newest first. */
  events: StoredEvent[];
  /** frozen are the events the list showed when it was paused; undefined while it is not. */
  frozen?: StoredEvent[];
  /** newWhilePaused counts the events received since the list was paused. */
  newWhilePaused: number;
  /** skipped sums the events the server left out, over the tail's rate. */
  skipped: number;
  /** arrivals are the times (ms) of the events received within the last RATE_WINDOW_MS, oldest first. */
  arrivals: number[];
}

export const emptyView: TailView = { events: [], newWhilePaused: 0, skipped: 0, arrivals: [] };

/**
 * received adds events (oldest first, as the stream sends them) to the view: the list keeps the newest TAIL_KEEP,
 * newest first; while paused they are counted and the list shown stays as it was.
 */
export function received(v: TailView, batch: Arrival[]): TailView {
  if (batch.length === 0) return v;
  const newest = batch
    .slice(-TAIL_KEEP)
    .map((a) => a.event)
    .reverse();
  const last = batch[batch.length - 1].at;
  return {
    ...v,
    events: [...newest, ...v.events].slice(0, TAIL_KEEP),
    newWhilePaused: v.frozen ? v.newWhilePaused + batch.length : 0,
    arrivals: [...v.arrivals, ...batch.map((a) => a.at)].filter((t) => t >= last - RATE_WINDOW_MS),
  };
}

/** skippedBy adds n events the server left out. */
export function skippedBy(v: TailView, n: number): TailView {
  return { ...v, skipped: v.skipped + n };
}

/** paused freezes the list shown; events go on being received and counted. */
export function paused(v: TailView): TailView {
  return v.frozen ? v : { ...v, frozen: v.events, newWhilePaused: 0 };
}

/** resumed shows the events received meanwhile (the newest TAIL_KEEP). */
export function resumed(v: TailView): TailView {
  return { ...v, frozen: undefined, newWhilePaused: 0 };
}

/** cleared empties the list and the count of skipped events; a paused list stays paused, empty. */
export function cleared(v: TailView): TailView {
  return { ...v, events: [], frozen: v.frozen && [], newWhilePaused: 0, skipped: 0 };
}

/** shownEvents are the events the list shows: the frozen ones while paused. */
export function shownEvents(v: TailView): StoredEvent[] {
  return v.frozen ?? v.events;
}

/**
 * rate is how many events a second arrived over the last RATE_WINDOW_MS before now; while the tail has listened
 * for less (since), over that time, at least a second, so that the first events do not read as a burst.
 */
export function rate(arrivals: number[], now: number, since: number): number {
  const span = Math.min(RATE_WINDOW_MS, Math.max(1_000, now - since));
  const n = arrivals.filter((t) => t >= now - span && t <= now).length;
  return n / (span / 1000);
}

/** rateText writes a rate with at most one decimal: "12.4 events/s", "0 events/s". */
export function rateText(r: number): string {
  return `${Number(r.toFixed(1))} events/s`;
}

/** skippedText says how many events the server left out, and why. */
export function skippedText(n: number): string {
  return `${n} not sent: over the tail's rate of ${TAIL_MAX_RATE} events/s`;
}

/** EventFields are the attributes of a stored event the list shows (empty when the event lacks one). */
export interface EventFields {
  id: string;
  type: string;
  source: string;
  subject: string;
}

/** eventFields reads the attributes the list shows from the CloudEvent a stored event holds. */
export function eventFields(s: StoredEvent): EventFields {
  const e = (s.event ?? {}) as Record<string, unknown>;
  const text = (k: string) => (typeof e[k] === 'string' ? (e[k] as string) : '');
  return { id: text('id'), type: text('type'), source: text('source'), subject: text('subject') };
}

// ---------------------------------------------------------------------------------------------------------------
// Status

/** TailStatus is where the tail's connection is. */
export type TailStatus =
  | { state: 'idle' }
  | { state: 'connecting' }
  | { state: 'listening'; since: number }
  | { state: 'disconnected'; reason: string };

/** Clock writes a time (ms since the epoch) as a time of day: clockTime in the browser's zone. */
export type Clock = (ms: number) => string;

/** clockTime writes a time of day to the second on a 24-hour clock: "12:00:01". */
export function clockTime(ms: number, opts: { locale?: string; timeZone?: string } = {}): string {
  return new Intl.DateTimeFormat(opts.locale, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZone: opts.timeZone }).format(ms);
}

/** statusText says where the tail is: "Connecting…", "Listening since 12:00:01", "Disconnected: …". */
export function statusText(s: TailStatus, clock: Clock): string {
  switch (s.state) {
    case 'idle':
      return 'Not started: set a filter if you like, then press Start.';
    case 'connecting':
      return 'Connecting…';
    case 'listening':
      return `Listening since ${clock(s.since)}`;
    case 'disconnected':
      return `Disconnected: ${s.reason}`;
  }
}

/** endedReason is why the tail stopped when the server ended the stream by itself. */
export const endedReason = 'the server ended the stream.';

/**
 * disconnectReason says in words why the tail failed to start or stopped, err being what streamTail threw at the
 * time now: too many tails (with when to try again, from Retry-After), the server's problem (a bad pattern, a bus
 * that does not exist), or a connection that failed.
 */
export function disconnectReason(err: unknown, now: number, clock: Clock): string {
  if (err instanceof ApiError && err.status === 429) {
    const when = err.retryAfter !== undefined ? ` after ${clock(now + err.retryAfter * 1000)}` : '';
    return `the account has ${MAX_TAILS} tails open, the most it may. Close another one (in another tab or window), then reconnect${when}.`;
  }
  if (err instanceof TypeError) return `the connection to the server failed (${err.message}).`;
  const text = err instanceof Error ? err.message : String(err);
  // "Disconnected: the bus …": the reason goes on the status's sentence, unless it starts with a name (API, ID).
  return /^[A-Z][a-z]/.test(text) ? text[0].toLowerCase() + text.slice(1) : text;
}
