/**
 * How the deliveries of a target, a source or a runtime connector go (docs/health.md), in words and colours: the
 * health badge's colour and tooltip, the last failure's cause, since when nothing succeeded, and the cumulative
 * counters. Pure: no React here; `now` is passed in.
 */
import type { components } from './api/schema';

export type DeliveryFailure = components['schemas']['DeliveryFailure'];

/** HEALTH_STATES are the states the API answers in `health`, from the best to the worst. */
export const HEALTH_STATES = ['HEALTHY', 'PENDING', 'PAUSED', 'STOPPED', 'RETRYING', 'DEAD_LETTERING', 'FAILING', 'FAILED'] as const;
export type Health = (typeof HEALTH_STATES)[number];

/**
 * healthColors are the badges' Mantine colours. Filled badges of these colours pass WCAG AA in both schemes (the
 * theme's autoContrast picks black or white text; health.test.ts checks it), and the badge always writes the state,
 * so the colour is never the only sign.
 */
export const healthColors: Record<Health, string> = {
  HEALTHY: 'green',
  PENDING: 'blue',
  PAUSED: 'gray',
  STOPPED: 'gray',
  RETRYING: 'yellow',
  DEAD_LETTERING: 'orange',
  FAILING: 'red',
  FAILED: 'red',
};

const isHealth = (h: string | undefined): h is Health => (HEALTH_STATES as readonly string[]).includes(h ?? '');

/** healthColor is the badge colour of a health state; gray for none or one this console does not know. */
export function healthColor(h: string | undefined): string {
  return isHealth(h) ? healthColors[h] : 'gray';
}

/** healthLabel is what the badge writes: the state with spaces ("DEAD LETTERING"), "UNKNOWN" for none. */
export function healthLabel(h: string | undefined): string {
  return h ? h.replace(/_/g, ' ') : 'UNKNOWN';
}

/** healthWords explains a health state in a sentence (the badge's tooltip). */
export function healthWords(h: string | undefined): string {
  switch (h) {
    case 'HEALTHY':
      return 'Healthy: the last attempt succeeded, or none failed since the task started.';
    case 'PENDING':
      return 'Pending: the runtime does not run it yet.';
    case 'RETRYING':
      return 'Retrying: the last attempt failed; the record is attempted again after the retry policy’s delay.';
    case 'FAILING':
      return 'Failing: a record waits for another attempt and none has been accepted for many attempts or minutes.';
    case 'DEAD_LETTERING':
      return 'Dead-lettering: records were given up to the dead letters in the last minutes.';
    case 'PAUSED':
      return 'Paused: an operator paused it; the events wait in the stream.';
    case 'STOPPED':
      return 'Stopped: an operator stopped it, or it is disabled; it runs no task.';
    case 'FAILED':
      return 'Failed: a task failed; it restarts by itself, backing off.';
    case undefined:
    case '':
      return 'The API reports no health.';
    default:
      return h;
  }
}

/** troubled says whether a state means deliveries fail now: its last failure is shown as an error. */
export function troubled(h: string | undefined): boolean {
  return h === 'RETRYING' || h === 'FAILING' || h === 'DEAD_LETTERING' || h === 'FAILED';
}

const classWords: Record<string, string> = {
  'connection-refused': 'connection refused',
  dns: 'the name does not resolve',
  'egress-refused': 'refused by the egress guard',
  timeout: 'no answer in time',
  tls: 'TLS failed',
  'connection-reset': 'connection reset',
  unreachable: 'host unreachable',
  transform: 'the input transformer refused the record',
};

/**
 * failureCause says in a few words why an attempt failed, from its error class: "connection refused", "HTTP 503",
 * "refused (HTTP 302)"; the message itself for a class without words ("error").
 */
export function failureCause(f: DeliveryFailure): string {
  const c = f.errorClass ?? '';
  if (classWords[c]) return classWords[c];
  if (c === 'http-4xx' || c === 'http-5xx') return f.httpStatus ? `HTTP ${f.httpStatus}` : `an HTTP ${c.slice(5)} answer`;
  if (c === 'refused') return f.httpStatus ? `refused (HTTP ${f.httpStatus})` : 'refused';
  return f.message || c || 'an error';
}

/** HealthFacts are the fields a target's or source's status and a runtime connector share. */
export interface HealthFacts {
  health?: string;
  lastFailure?: DeliveryFailure;
  lastSuccessAt?: string;
  lastError?: string;
}

/**
 * Success says what happened to the deliveries around the last failure:
 * - none-since: the last success came before the last failure (at), none after it;
 * - never: no success since the task started (the facts are a task's);
 * - recovered: a success came after the last failure (at);
 * - last: no failure, and the last success at.
 */
export type Success = { kind: 'none-since'; at: string } | { kind: 'never' } | { kind: 'recovered'; at: string } | { kind: 'last'; at: string };

const time = (t: string | undefined) => (t ? Date.parse(t) : NaN);

/** successOf says how the last success stands to the last failure; undefined when there was neither. */
export function successOf(f: HealthFacts): Success | undefined {
  const ok = f.lastSuccessAt;
  if (!f.lastFailure) return ok ? { kind: 'last', at: ok } : undefined;
  if (!ok) return { kind: 'never' };
  // An unreadable time is taken as before: the failure is the news.
  return time(ok) > time(f.lastFailure.at) ? { kind: 'recovered', at: ok } : { kind: 'none-since', at: ok };
}

/**
 * clockTime writes a time short, in the browser's zone: "14:02:11" today, "3 Dec, 14:02" another day (the exact
 * time is the tooltip's). locale and timeZone are for tests.
 */
export function clockTime(t: string, now: Date, opts: { locale?: string; timeZone?: string } = {}): string {
  const at = Date.parse(t);
  if (Number.isNaN(at)) return t;
  const day = (d: number) => new Intl.DateTimeFormat('en-CA', { timeZone: opts.timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(d);
  const sameDay = day(at) === day(now.getTime());
  return new Intl.DateTimeFormat(
    opts.locale,
    sameDay
      ? { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZone: opts.timeZone }
      : { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: opts.timeZone },
  ).format(at);
}

/**
 * attemptText is the failure's attempt in parentheses, " (attempt 3)"; nothing for a source's failure, which has no
 * attempt.
 */
export function attemptText(f: DeliveryFailure): string {
  return f.attempt ? ` (attempt ${f.attempt})` : '';
}

/** successText is what follows the last failure: "no success since 14:02:11", "no success since the task started". */
export function successText(s: Success | undefined, now: Date, relative: (t: string) => string, opts: { locale?: string; timeZone?: string } = {}): string {
  switch (s?.kind) {
    case 'none-since':
      return `no success since ${clockTime(s.at, now, opts)}`;
    case 'never':
      return 'no success since the task started';
    case 'recovered':
      return `delivering again, last success ${relative(s.at)}`;
    case 'last':
      return `last success ${relative(s.at)}`;
    default:
      return '';
  }
}

/**
 * healthText is the whole line in words, as the console shows it: "Last failure 2 min ago (attempt 3): connection
 * refused; no success since 14:02:11", "Last success 5 s ago", "No delivery yet"; with lastError alone (a failed
 * task), "Last error: …". relative writes a time relative to now (format.ts's relativeTime).
 */
export function healthText(
  f: HealthFacts,
  now: Date,
  relative: (t: string) => string,
  opts: { locale?: string; timeZone?: string; idle?: string } = {},
): string {
  const s = successOf(f);
  if (f.lastFailure) {
    const after = successText(s, now, relative, opts);
    const at = f.lastFailure.at ? ' ' + relative(f.lastFailure.at) : '';
    return `Last failure${at}${attemptText(f.lastFailure)}: ${failureCause(f.lastFailure)}${after ? '; ' + after : ''}`;
  }
  if (f.lastError) return `Last error: ${f.lastError}`;
  if (s) {
    const t = successText(s, now, relative, opts);
    return t.charAt(0).toUpperCase() + t.slice(1);
  }
  return opts.idle ?? 'No delivery yet';
}

/**
 * healthTimes are the exact times of the last failure and success, for the line's tooltip: "Last failure: 2 Dec
 * 2026, 20:18:00 UTC. Last success: …". exact writes a time in full (format.ts's exactTime).
 */
export function healthTimes(f: HealthFacts, exact: (t: string) => string): string {
  const parts: string[] = [];
  if (f.lastFailure?.at) parts.push(`Last failure: ${exact(f.lastFailure.at)}.`);
  if (f.lastSuccessAt) parts.push(`Last success: ${exact(f.lastSuccessAt)}.`);
  return parts.join(' ');
}

/** TargetCounters and SourceCounters are what a target or a source did since it was created. */
export type TargetCounters = components['schemas']['TaskCounters'];
export type SourceCounters = components['schemas']['SourceTaskCounters'];

const counterOrder: [string, string][] = [
  ['read', 'read'],
  ['written', 'written'],
  ['delivered', 'delivered'],
  ['filtered', 'filtered'],
  ['retried', 'retried'],
  ['failed', 'failed'],
  ['deadLettered', 'dead-lettered'],
  ['dropped', 'dropped'],
];

/**
 * countersText writes cumulative counters ("read 12 · delivered 11 · dead-lettered 1"), those that are 0 left out;
 * "nothing yet" when all are, "no counters yet" when the runtime reported none.
 */
export function countersText(c: TargetCounters | SourceCounters | undefined): string {
  if (!c) return 'no counters yet';
  const v = c as Record<string, number | undefined>;
  const parts = counterOrder.filter(([k]) => (v[k] ?? 0) !== 0).map(([k, label]) => `${label} ${v[k]}`);
  return parts.length > 0 ? parts.join(' · ') : 'nothing yet';
}
