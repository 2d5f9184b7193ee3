/**
 * The time windows of the pages that search what happened (events, the bus log, the audit log): a span up to now,
 * everything kept, or from and to as the user types them. Pure.
 */
import { localTime } from './keys';

/** SPAN_MS are the spans a window may be, in milliseconds. */
export const SPAN_MS = { '15m': 900_000, '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;

export type Span = keyof typeof SPAN_MS;

/**
 * windowBounds are the API's from and to (RFC 3339) of a window at the time now: a span ends now, 'any' bounds
 * nothing, 'custom' reads from and to as datetime-local values ("2026-12-01T10:00", the browser's zone; what does
 * not read as one bounds nothing).
 */
export function windowBounds(window: Span | 'any' | 'custom', from: string, to: string, now: Date): { from?: string; to?: string } {
  if (window === 'custom') return { from: localTime(from)?.toISOString(), to: localTime(to)?.toISOString() };
  if (window === 'any') return {};
  return { from: new Date(now.getTime() - SPAN_MS[window]).toISOString() };
}

/** WindowErrors are the problems of a custom window's fields, by field. */
export type WindowErrors = Partial<Record<'from' | 'to', string>>;

/** customWindowErrors checks a custom window's from and to as typed: each a date and time, to after from. */
export function customWindowErrors(from: string, to: string): WindowErrors {
  const e: WindowErrors = {};
  const f = from.trim() ? localTime(from) : undefined;
  const t = to.trim() ? localTime(to) : undefined;
  if (from.trim() && !f) e.from = 'Give a date and time.';
  if (to.trim() && !t) e.to = 'Give a date and time.';
  if (f && t && f.getTime() >= t.getTime()) e.to = 'To is not after from.';
  return e;
}
