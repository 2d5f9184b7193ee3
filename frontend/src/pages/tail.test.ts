import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/problem';
import {
  clockTime,
  cleared,
  disconnectReason,
  emptyFilter,
  emptyView,
  endedReason,
  eventFields,
  filterFromSearch,
  filterToSearch,
  patternProblems,
  paused,
  rate,
  rateText,
  received,
  resumed,
  shownEvents,
  skippedBy,
  skippedText,
  statusText,
  TAIL_KEEP,
  tailQuery,
  type Arrival,
  type StoredEvent,
  type TailFilter,
} from './tail';
import { eventTracePath } from './events';

const stored = (sequence: number): StoredEvent => ({ sequence, storedAt: '2026-12-01T12:00:00Z', event: { id: `e${sequence}` } as unknown as StoredEvent['event'] });
/** arrivals are events with sequences from..to, one every 10 ms from at. */
const arrivals = (from: number, to: number, at = 0): Arrival[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ event: stored(from + i), at: at + i * 10 }));
const seqs = (es: StoredEvent[]) => es.map((e) => e.sequence);
const clock = (ms: number) => clockTime(ms, { locale: 'en-GB', timeZone: 'UTC' });

describe('the filter in the address and the query', () => {
  const full: TailFilter = { type: 'order.created', source: 'shop.web', subject: 'o-1', pattern: '{"data": {"amount": [{"numeric": [">", 100]}]}}' };

  it('writes every field and reads it back', () => {
    const sp = filterToSearch(full);
    expect(sp.get('pattern')).toBe(full.pattern);
    expect(filterFromSearch(new URLSearchParams(sp.toString()))).toEqual(full);
  });

  it('leaves empty and blank fields out, and trims the others', () => {
    expect(filterToSearch({ ...emptyFilter, type: ' order.created ', source: '  ' }).toString()).toBe('type=order.created');
    expect(filterToSearch(emptyFilter).toString()).toBe('');
  });

  it('reads a missing field as empty', () => {
    expect(filterFromSearch(new URLSearchParams('source=shop.web'))).toEqual({ ...emptyFilter, source: 'shop.web' });
  });

  it('asks the tail for the fields given only', () => {
    expect(tailQuery({ ...emptyFilter, subject: 'o-1' })).toEqual({ type: undefined, source: undefined, subject: 'o-1', pattern: undefined });
  });
});

describe('patternProblems', () => {
  it('finds none without a pattern: the tail sends every event', () => {
    expect(patternProblems({ ...emptyFilter, pattern: '  ' })).toEqual([]);
  });

  it('finds none in a valid pattern', () => {
    expect(patternProblems({ ...emptyFilter, pattern: '{"type": ["order.created"]}' })).toEqual([]);
  });

  it('says what is wrong in a pattern, where', () => {
    expect(patternProblems({ ...emptyFilter, pattern: '{"type": "order.created"}' })).toEqual([
      { path: 'type', message: 'the value must be an array of allowed values, such as ["order.created"]' },
    ]);
    expect(patternProblems({ ...emptyFilter, pattern: '{"type": ' })[0].message).toMatch(/^event pattern is not JSON/);
  });
});

describe('the events shown', () => {
  it('shows the newest first', () => {
    const v = received(received(emptyView, arrivals(1, 2)), arrivals(3, 4, 100));
    expect(seqs(shownEvents(v))).toEqual([4, 3, 2, 1]);
  });

  it(`keeps the newest ${TAIL_KEEP} only`, () => {
    let v = received(emptyView, arrivals(1, 300));
    v = received(v, arrivals(301, 700, 3000));
    expect(v.events).toHaveLength(TAIL_KEEP);
    expect(v.events[0].sequence).toBe(700);
    expect(v.events[TAIL_KEEP - 1].sequence).toBe(201);
    expect(seqs(received(emptyView, arrivals(1, 600)).events).slice(-1)).toEqual([101]);
  });

  it('freezes the list while paused, counts what comes, and shows it on resume', () => {
    let v = paused(received(emptyView, arrivals(1, 3)));
    v = received(v, arrivals(4, 5, 100));
    v = received(v, arrivals(6, 6, 200));
    expect(seqs(shownEvents(v))).toEqual([3, 2, 1]);
    expect(v.newWhilePaused).toBe(3);
    v = resumed(v);
    expect(seqs(shownEvents(v))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(v.newWhilePaused).toBe(0);
  });

  it('pausing twice keeps the first list and count', () => {
    const v = received(paused(received(emptyView, arrivals(1, 1))), arrivals(2, 2, 10));
    expect(paused(v)).toBe(v);
  });

  it('clears the list and the skipped count, paused or not, and keeps the rate', () => {
    const v = skippedBy(received(emptyView, arrivals(1, 3)), 7);
    const c = cleared(v);
    expect(shownEvents(c)).toEqual([]);
    expect(c.skipped).toBe(0);
    expect(c.arrivals).toEqual(v.arrivals);
    const p = cleared(received(paused(v), arrivals(4, 4, 100)));
    expect(shownEvents(p)).toEqual([]);
    expect(p.newWhilePaused).toBe(0);
    expect(seqs(shownEvents(received(p, arrivals(5, 5, 200))))).toEqual([]);
    expect(seqs(shownEvents(resumed(received(p, arrivals(5, 5, 200)))))).toEqual([5]);
  });

  it('sums the skipped counts', () => {
    expect(skippedBy(skippedBy(emptyView, 12), 30).skipped).toBe(42);
    expect(skippedText(42)).toBe("42 not sent: over the tail's rate of 100 events/s");
  });
});

describe('rate', () => {
  it('counts the events of the last 5 seconds', () => {
    // 62 events over the last 5 s (one every 10 ms from 10.8 s), 20 more before.
    const v = received(emptyView, [...arrivals(1, 20, 0), ...arrivals(21, 82, 10_800)]);
    expect(rate(v.arrivals, 15_000, 0)).toBeCloseTo(12.4);
    expect(rateText(rate(v.arrivals, 15_000, 0))).toBe('12.4 events/s');
  });

  it('keeps only the arrivals that may still count', () => {
    const v = received(received(emptyView, arrivals(1, 10, 0)), arrivals(11, 12, 9_000));
    expect(v.arrivals).toEqual([9_000, 9_010]);
  });

  it('falls to 0 when nothing comes', () => {
    const v = received(emptyView, arrivals(1, 10, 0));
    expect(rate(v.arrivals, 6_000, 0)).toBe(0);
    expect(rateText(0)).toBe('0 events/s');
  });

  it('measures over the time listened when it is less than 5 s, at least a second', () => {
    const v = received(emptyView, arrivals(1, 20, 1_000)); // 20 events within 0.2 s of listening from 1 s
    expect(rate(v.arrivals, 3_000, 1_000)).toBe(10);
    expect(rate(v.arrivals, 1_500, 1_000)).toBe(20);
  });
});

describe('eventFields and eventTracePath', () => {
  it('reads the attributes of the CloudEvent, empty when missing or not text', () => {
    const s = { sequence: 1, event: { id: '42', type: 'order.created', source: 'shop.web', data: {} } } as unknown as StoredEvent;
    expect(eventFields(s)).toEqual({ id: '42', type: 'order.created', source: 'shop.web', subject: '' });
    expect(eventFields({ sequence: 2, event: { id: 7 } } as unknown as StoredEvent).id).toBe('');
    expect(eventFields({ sequence: 3 })).toEqual({ id: '', type: '', source: '', subject: '' });
  });

  it('links an event to its trace, its id and source escaped', () => {
    expect(eventTracePath('orders', 'a/b 1', 'https://shop.example/web?x=1')).toBe('/buses/orders/events/a%2Fb%201?source=https%3A%2F%2Fshop.example%2Fweb%3Fx%3D1');
  });

  it('has the trace look from a second before the event was stored, when that is known', () => {
    expect(eventTracePath('orders', '42', 'shop.web', '2026-12-01T12:00:00.500Z')).toBe('/buses/orders/events/42?source=shop.web&from=2026-12-01T11%3A59%3A59.500Z');
    expect(eventTracePath('orders', '42', 'shop.web', 'not a time')).toBe('/buses/orders/events/42?source=shop.web');
  });
});

describe('status', () => {
  it('says each state', () => {
    expect(statusText({ state: 'connecting' }, clock)).toBe('Connecting…');
    expect(statusText({ state: 'listening', since: Date.parse('2026-12-01T12:00:01Z') }, clock)).toBe('Listening since 12:00:01');
    expect(statusText({ state: 'disconnected', reason: endedReason }, clock)).toBe('Disconnected: the server ended the stream.');
    expect(statusText({ state: 'idle' }, clock)).toMatch(/^Not started/);
  });

  it('says to close another tail when there are too many, and when to try again', () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    const err = new ApiError(429, { code: 'TooManyTails', detail: 'too many tails' }, 30);
    expect(disconnectReason(err, now, clock)).toBe(
      'the account has 5 tails open, the most it may. Close another one (in another tab or window), then reconnect after 12:00:30.',
    );
    expect(disconnectReason(new ApiError(429, { code: 'TooManyTails' }), now, clock)).toMatch(/then reconnect\.$/);
  });

  it('gives the server’s problem, and a failed connection, in the status’s sentence', () => {
    const bad = new ApiError(400, { code: 'InvalidEventPattern', field: 'pattern', detail: 'Pattern: type must be an array' });
    expect(disconnectReason(bad, 0, clock)).toBe('pattern: type must be an array.');
    expect(disconnectReason(new ApiError(404, { detail: 'bus "x" does not exist' }), 0, clock)).toBe('bus "x" does not exist.');
    expect(disconnectReason(new TypeError('network error'), 0, clock)).toBe('the connection to the server failed (network error).');
    expect(disconnectReason(new Error('API answered no stream'), 0, clock)).toBe('API answered no stream');
  });
});
