import { describe, expect, it } from 'vitest';
import {
  checkLogFilters,
  defaultLogFilters,
  emptyText,
  eventStoredAt,
  explanationText,
  levelChoices,
  levelColor,
  logTime,
  logFiltersFromSearch,
  logFiltersSet,
  logFiltersToSearch,
  logPatch,
  logQuery,
  logSettingsOf,
  RECORD_TYPES,
  recordSummary,
  settingsToast,
  windowChoices,
  type BusLogRecord,
  type LogFilters,
} from './busLog';

const now = new Date('2026-12-01T12:00:00Z');
const filters = (f: Partial<LogFilters>): LogFilters => ({ ...defaultLogFilters, ...f });
const rec = (r: Partial<BusLogRecord>): BusLogRecord => ({ id: '1', time: '2026-12-01T12:00:00Z', eventId: '42', eventSource: 'shop.web', ...r });

describe('log settings', () => {
  it('reads a bus’s log config, OFF and NONE when it has none', () => {
    expect(logSettingsOf({ name: 'orders', logConfig: { level: 'INFO', includeDetail: 'FULL' } })).toEqual({ level: 'INFO', includeDetail: 'FULL' });
    expect(logSettingsOf({ name: 'orders' })).toEqual({ level: 'OFF', includeDetail: 'NONE' });
    expect(logSettingsOf({ name: 'orders', logConfig: { level: 'TRACE' } })).toEqual({ level: 'TRACE', includeDetail: 'NONE' });
    expect(logSettingsOf(undefined)).toEqual({ level: 'OFF', includeDetail: 'NONE' });
  });

  it('patches the log config only, both fields given (absent ones would be reset)', () => {
    expect(logPatch({ level: 'ERROR', includeDetail: 'FULL' })).toEqual({ logConfig: { level: 'ERROR', includeDetail: 'FULL' } });
  });

  it('says what a save did', () => {
    expect(settingsToast('orders', { level: 'INFO', includeDetail: 'FULL' })).toBe('Log of orders set to INFO, with detail');
    expect(settingsToast('orders', { level: 'TRACE', includeDetail: 'NONE' })).toBe('Log of orders set to TRACE');
    expect(settingsToast('orders', { level: 'OFF', includeDetail: 'FULL' })).toBe('Log of orders turned off');
  });

  it('explains each level in one line', () => {
    expect(levelChoices.map((c) => c.value)).toEqual(['OFF', 'ERROR', 'INFO', 'TRACE']);
    for (const c of levelChoices) expect(c.description).toMatch(/^[A-Z][^\n]+\.$/);
  });
});

describe('filters in the address', () => {
  it.each([
    ['the defaults', defaultLogFilters, ''],
    ['a window', filters({ window: '24h' }), 'window=24h'],
    ['everything kept', filters({ window: 'any' }), 'window=any'],
    ['a custom window', filters({ window: 'custom', from: '2026-12-01T08:00', to: '2026-12-01T09:30' }), 'window=custom&from=2026-12-01T08%3A00&to=2026-12-01T09%3A30'],
    [
      'every filter',
      filters({ level: 'ERROR', type: 'INVOCATION_DLQ', rule: 'created', target: 'hook', eventSource: 'shop.web', eventId: '42' }),
      'level=ERROR&type=INVOCATION_DLQ&rule=created&target=hook&eventSource=shop.web&eventId=42',
    ],
  ])('%s: written and read back', (_, f, text) => {
    expect(logFiltersToSearch(f).toString()).toBe(text);
    expect(logFiltersFromSearch(new URLSearchParams(text))).toEqual(f);
  });

  it('trims values and leaves blank ones out', () => {
    expect(logFiltersToSearch(filters({ rule: ' created ', target: '  ' })).toString()).toBe('rule=created');
  });

  it('reads an unknown window or level as the default, and from and to only for a custom window', () => {
    expect(logFiltersFromSearch(new URLSearchParams('window=year&level=TRACE&from=2026-12-01T08:00'))).toEqual(defaultLogFilters);
  });

  it('drops from and to when the window is not custom', () => {
    expect(logFiltersToSearch(filters({ window: '15m', from: '2026-12-01T08:00' })).toString()).toBe('window=15m');
  });
});

describe('logQuery', () => {
  it('asks for the last hour of every record by default, a page of 100', () => {
    expect(logQuery(defaultLogFilters, now)).toEqual({
      from: '2026-12-01T11:00:00.000Z',
      to: undefined,
      level: undefined,
      type: undefined,
      rule: undefined,
      target: undefined,
      eventSource: undefined,
      eventId: undefined,
      limit: 100,
      nextToken: undefined,
    });
  });

  it.each([
    ['15m', '2026-12-01T11:45:00.000Z'],
    ['24h', '2026-11-30T12:00:00.000Z'],
    ['any', undefined],
  ] as const)('a window of %s starts at %s', (window, from) => {
    expect(logQuery(filters({ window }), now)).toMatchObject({ from, to: undefined });
  });

  it('reads a custom window in the browser’s zone', () => {
    const q = logQuery(filters({ window: 'custom', from: '2026-11-30T08:00', to: '2026-11-30T09:30' }), now);
    expect(q.from).toBe(new Date(2026, 10, 30, 8, 0).toISOString());
    expect(q.to).toBe(new Date(2026, 10, 30, 9, 30).toISOString());
  });

  it('sends the filters given, trimmed, with the page’s token', () => {
    const f = filters({ level: 'INFO', type: 'RULE_MATCH', rule: ' created ', target: 'hook', eventSource: 'shop.web', eventId: '42' });
    expect(logQuery(f, now, 'tok-2', 50)).toMatchObject({
      level: 'INFO',
      type: 'RULE_MATCH',
      rule: 'created',
      target: 'hook',
      eventSource: 'shop.web',
      eventId: '42',
      limit: 50,
      nextToken: 'tok-2',
    });
  });

  it('counts the filters set beyond the window', () => {
    expect(logFiltersSet(filters({ window: '24h' }))).toBe(0);
    expect(logFiltersSet(filters({ level: 'ERROR', rule: 'created', eventId: ' ' }))).toBe(2);
  });
});

describe('checkLogFilters', () => {
  it('lets valid filters be', () => {
    expect(checkLogFilters(filters({ window: 'custom', from: '2026-12-01T08:00', to: '2026-12-01T09:00' }))).toEqual({});
    expect(checkLogFilters(filters({ window: '1h', from: 'nonsense' }))).toEqual({});
  });

  it('says when from or to is not a time, or to is not after from', () => {
    expect(checkLogFilters(filters({ window: 'custom', from: 'yesterday' }))).toEqual({ from: 'Give a date and time.' });
    expect(checkLogFilters(filters({ window: 'custom', from: '2026-12-01T09:00', to: '2026-12-01T09:00' }))).toEqual({ to: 'To is not after from.' });
  });

  it('offers a choice for every window', () => {
    expect(windowChoices.map((c) => c.value)).toEqual(['15m', '1h', '24h', 'any', 'custom']);
  });
});

describe('recordSummary', () => {
  it.each<[string, Partial<BusLogRecord>, string]>([
    ['a retried attempt', { type: 'INVOCATION_ATTEMPT_RETRYABLE_FAILURE', target: 'hook', attempt: 2, httpStatus: 503, errorClass: 'http-5xx' }, 'Attempt 2 to target hook: HTTP 503 (http-5xx), retrying'],
    ['a retried attempt without HTTP', { type: 'INVOCATION_ATTEMPT_RETRYABLE_FAILURE', target: 'hook', attempt: 1, errorClass: 'network', message: 'connection refused' }, 'Attempt 1 to target hook: connection refused (network), retrying'],
    ['a last attempt', { type: 'INVOCATION_ATTEMPT_PERMANENT_FAILURE', target: 'hook', attempt: 3, httpStatus: 400, errorClass: 'http-4xx' }, 'Attempt 3 to target hook: HTTP 400 (http-4xx), no more attempts'],
    ['an attempt that says nothing', { type: 'INVOCATION_ATTEMPT_PERMANENT_FAILURE' }, 'An attempt to the target: failed, no more attempts'],
    ['a success', { type: 'INVOCATION_ATTEMPT_SUCCESS', target: 'hook', attempt: 2, latencyMs: 2.44 }, 'Attempt 2 to target hook succeeded in 2.4 ms'],
    ['a slow success with a status', { type: 'INVOCATION_ATTEMPT_SUCCESS', target: 'hook', attempt: 1, httpStatus: 200, latencyMs: 1500 }, 'Attempt 1 to target hook succeeded: HTTP 200 in 1.5 s'],
    ['a receipt', { type: 'EVENT_RECEIPT', sequence: 9 }, 'Read by the router (sequence 9)'],
    ['a match', { type: 'RULE_MATCH', rule: 'created' }, 'Matched rule created'],
    ['no match at all', { type: 'NO_STANDARD_RULES_MATCHED' }, 'Matched no rule'],
    ['rules not listed', { type: 'RULE_NO_MATCH_OMITTED', omitted: 12 }, 'Did not match 12 more rules, not listed'],
    ['one rule not listed', { type: 'RULE_NO_MATCH_OMITTED', omitted: 1 }, 'Did not match 1 more rule, not listed'],
    ['a dead letter', { type: 'INVOCATION_DLQ', target: 'hook', attempt: 3 }, 'Target hook dead-lettered the event after 3 attempts'],
    ['a drop', { type: 'INVOCATION_DROPPED', target: 'hook', attempt: 1 }, 'Target hook gave the event up after 1 attempt, without a dead letter'],
    ['a failed task', { type: 'INVOCATION_FAILURE', target: 'hook', message: 'retries exhausted' }, 'Target hook could not deliver the event, and its task failed: retries exhausted'],
    ['a filtered event', { type: 'EVENT_FILTERED', target: 'hook' }, 'The transform of target hook filtered the event out'],
    ['a redrive', { type: 'EVENT_REDRIVEN', target: 'hook' }, 'A dead letter of the event was redriven to target hook'],
    ['a replay', { type: 'REPLAY_COMPLETED', replay: 'r1', message: '120 events replayed to orders' }, 'Replay r1 completed: 120 events replayed to orders'],
    ['a failed replay', { type: 'REPLAY_FAILED', replay: 'r1' }, 'Replay r1 failed'],
    ['a type newer than the console', { type: 'EVENT_ARCHIVED', message: 'to a1' }, 'Event archived: to a1'],
  ])('%s', (_, r, text) => {
    expect(recordSummary(rec(r))).toBe(text);
  });

  it('says why a rule did not match', () => {
    const r = rec({
      type: 'RULE_NO_MATCH',
      rule: 'big',
      explanation: { path: 'data.amount', expected: [{ numeric: ['>', 100] }], actual: 20, reason: 'no value matches' } as unknown as BusLogRecord['explanation'],
    });
    expect(recordSummary(r)).toBe('Did not match rule big: data.amount: no value matches (the event has 20; the rule wants [{"numeric":[">",100]}])');
    expect(recordSummary(rec({ type: 'RULE_NO_MATCH', rule: 'big' }))).toBe('Did not match rule big');
  });

  it('explains a missing field, and cuts a long alternative list', () => {
    expect(explanationText({ path: 'data.x', expected: ['a'], reason: 'the event has no value at this path' })).toBe(
      'data.x: the event has no value at this path (the rule wants ["a"])',
    );
    const long = explanationText({ path: 'type', expected: Array.from({ length: 30 }, (_, i) => `order.type${i}`), actual: 'x', reason: 'no value matches' });
    expect(long).toMatch(/the rule wants \["order\.type0",.*…\)$/);
    expect(long.length).toBeLessThan(160);
    expect(explanationText(null)).toBe('');
  });

  it('has a summary for every record type the log writes', () => {
    for (const type of RECORD_TYPES) {
      const s = recordSummary(rec({ type, target: 'hook', rule: 'created', replay: 'r1' }));
      expect(s, type).not.toMatch(new RegExp(type.toLowerCase().replaceAll('_', ' '), 'i'));
    }
  });
});

describe('levels and empty states', () => {
  it.each([
    ['ERROR', 'red'],
    ['INFO', 'blue'],
    ['TRACE', 'gray'],
    [undefined, 'gray'],
  ])('a %s badge is %s', (level, color) => {
    expect(levelColor(level)).toBe(color);
  });

  it('says that nothing is recorded while the level is OFF, and how to turn it on', () => {
    expect(emptyText('OFF', 0)).toMatch(/^Nothing is recorded: the log level of this bus is OFF\. Choose ERROR, INFO or TRACE/);
    expect(emptyText('OFF', 2)).toMatch(/is OFF/);
  });

  it('says when filters match nothing, and what ERROR records', () => {
    expect(emptyText('INFO', 1)).toBe('No records match these filters in this time.');
    expect(emptyText('ERROR', 0)).toMatch(/only failures are recorded/);
    expect(emptyText('TRACE', 0)).toMatch(/put an event on the bus/);
    expect(emptyText(undefined, 0)).toBe('No records in this time.');
  });

  it('writes the time of a record of today, and the day of another', () => {
    const opts = { locale: 'en-GB', timeZone: 'UTC' };
    expect(logTime('2026-12-01T09:15:03.120Z', now, opts)).toBe('09:15:03');
    expect(logTime('2026-11-30T23:59:58Z', now, opts)).toBe('30 Nov 23:59:58');
    expect(logTime('2026-11-30T23:59:58Z', now, { locale: 'en-GB', timeZone: 'Europe/Paris' })).toBe('00:59:58');
    expect(logTime('soon', now, opts)).toBe('soon');
    expect(logTime(undefined, now, opts)).toBe('');
  });

  it('gives the trace the time the event was stored from the router’s records only', () => {
    expect(eventStoredAt(rec({ type: 'EVENT_RECEIPT', storedAt: '2026-12-01T12:00:00Z' }))).toBe('2026-12-01T12:00:00Z');
    expect(eventStoredAt(rec({ type: 'RULE_MATCH', storedAt: '2026-12-01T12:00:00Z' }))).toBe('2026-12-01T12:00:00Z');
    expect(eventStoredAt(rec({ type: 'INVOCATION_ATTEMPT_SUCCESS', storedAt: '2026-12-01T12:00:00Z' }))).toBeUndefined();
  });
});
