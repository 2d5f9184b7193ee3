import { describe, expect, it } from 'vitest';
import type { components } from '../api/schema';
import {
  alternativeText,
  attributesOf,
  checkFilters,
  cutBytes,
  defaultFilters,
  emptyText,
  type EventFilters,
  expectedText,
  explanationText,
  filtersFromSearch,
  filtersSet,
  filtersToSearch,
  finalState,
  hasErrors,
  noLogText,
  replayBody,
  replayChoice,
  storedKey,
  storedPlace,
  replayDone,
  replayName,
  replayText,
  searchQuery,
  shortText,
  stepOf,
  tracePath,
  traceModel,
  verdictRow,
  verdictSummary,
} from './events';

type Schemas = components['schemas'];
type BusLogRecord = Schemas['BusLogRecord'];
type EventTrace = Schemas['EventTrace'];

const now = new Date('2026-12-01T12:00:00Z');
const filters = (patch: Partial<EventFilters>): EventFilters => ({ ...defaultFilters, ...patch });

describe('search filters in the address', () => {
  it('reads defaults from an empty address: the last hour, no filter', () => {
    expect(filtersFromSearch(new URLSearchParams())).toEqual(defaultFilters);
    expect(filtersToSearch(defaultFilters).toString()).toBe('');
  });

  it('round-trips every filter, the pattern included', () => {
    const f = filters({ window: 'custom', from: '2026-12-01T10:00', to: '2026-12-01T11:00', type: 'order.created', source: 'shop', subject: 'o/1', id: '42', pattern: '{"data": {"amount": [{"numeric": [">", 100]}]}}' });
    const sp = filtersToSearch(f);
    expect(filtersFromSearch(new URLSearchParams(sp.toString()))).toEqual(f);
  });

  it('keeps from and to only for a custom window, and trims texts', () => {
    const sp = filtersToSearch(filters({ window: '15m', from: '2026-12-01T10:00', type: '  order.created ' }));
    expect(Object.fromEntries(sp)).toEqual({ window: '15m', type: 'order.created' });
  });

  it('reads an unknown window as the default', () => {
    expect(filtersFromSearch(new URLSearchParams('window=7y')).window).toBe('1h');
    expect(filtersFromSearch(new URLSearchParams('window=any')).window).toBe('any');
  });
});

describe('checkFilters', () => {
  it('accepts the defaults and a good pattern', () => {
    expect(hasErrors(checkFilters(defaultFilters))).toBe(false);
    expect(hasErrors(checkFilters(filters({ pattern: '{"type": ["order.created"]}' })))).toBe(false);
  });

  it('says what is wrong in a pattern, at its place, as the builder does', () => {
    const e = checkFilters(filters({ pattern: '{"data": {"amount": 5}}' }));
    expect(e.pattern).toEqual([{ path: 'data.amount', message: 'the value must be an array of allowed values, such as [5]' }]);
    expect(checkFilters(filters({ pattern: '{"type": ' })).pattern?.[0].message).toMatch(/^event pattern is not JSON/);
  });

  it('checks a custom window: times that are not ones, and to before from', () => {
    expect(checkFilters(filters({ window: 'custom', from: 'yesterday' }))).toEqual({ from: 'Give a date and time.' });
    expect(checkFilters(filters({ window: 'custom', from: '2026-12-01T11:00', to: '2026-12-01T10:00' }))).toEqual({ to: 'To is not after from.' });
    // Not read unless the window is custom.
    expect(checkFilters(filters({ window: '1h', from: 'yesterday' }))).toEqual({});
  });
});

describe('searchQuery', () => {
  it('starts a preset window that long before now', () => {
    expect(searchQuery(filters({ window: '15m' }), now)).toMatchObject({ from: '2026-12-01T11:45:00.000Z', to: undefined, limit: 50 });
    expect(searchQuery(filters({ window: '24h' }), now).from).toBe('2026-11-30T12:00:00.000Z');
    expect(searchQuery(filters({ window: 'any' }), now).from).toBeUndefined();
  });

  it('reads a custom window in the browser zone', () => {
    const q = searchQuery(filters({ window: 'custom', from: '2026-12-01T10:00', to: '2026-12-01T10:30' }), now);
    expect(q.from).toBe(new Date(2026, 11, 1, 10, 0).toISOString());
    expect(q.to).toBe(new Date(2026, 11, 1, 10, 30).toISOString());
  });

  it('sends the pattern on one line, the texts trimmed, the page token and size', () => {
    const q = searchQuery(filters({ type: ' order.created ', pattern: '{\n  "source": ["shop"]\n}' }), now, 'Nw', 100);
    expect(q).toMatchObject({ type: 'order.created', source: undefined, pattern: '{"source":["shop"]}', nextToken: 'Nw', limit: 100 });
  });

  it('counts the filters besides the window', () => {
    expect(filtersSet(filters({ window: '15m' }))).toBe(0);
    expect(filtersSet(filters({ type: 'a', pattern: '{"x": [1]}' }))).toBe(2);
  });

  it('explains an empty result: the window, the filters and the scan limit within the retention', () => {
    expect(emptyText(filters({}), '3 days')).toBe(
      "This bus stored no event in the last hour. The search reads the events the bus keeps, within the bus's retention (3 days), at most 10,000 of them a page: widen the time window or loosen the filters.",
    );
    expect(emptyText(filters({ window: 'any', type: 'x' }), '')).toMatch(/^No event of this bus matches these filters\. .*within the bus's retention, at most 10,000/);
  });
});

describe('events', () => {
  it('reads the attributes a page shows, leaving out what is not text', () => {
    expect(attributesOf({ id: '42', source: 'shop', type: 't', subject: 7, data: {} })).toEqual({ id: '42', source: 'shop', type: 't', subject: undefined, time: undefined });
    expect(attributesOf(null)).toEqual({});
  });

  it("links a stored event to its trace, from a second before it was stored", () => {
    const path = tracePath('orders/eu', { sequence: 7, storedAt: '2026-12-01T09:14:03.120Z', event: { id: 'a b', source: 'shop.web' } as never });
    expect(path).toBe('/buses/orders%2Feu/events/a%20b?source=shop.web&from=2026-12-01T09%3A14%3A02.120Z');
    expect(tracePath('orders', { event: { id: '1' } as never })).toBeUndefined();
  });
});

describe('shortText', () => {
  it('cuts a long ID for the breadcrumbs, keeping a short one', () => {
    expect(shortText('6f1c2b6e-8d7a-4c43-9a43-0e6f0b6f2d11')).toBe('6f1c2b6e-8d7a-4c43-9a43…');
    expect(shortText('e-1')).toBe('e-1');
  });
});

describe('pattern explanations', () => {
  it('says the numeric example of the issue in one line', () => {
    expect(explanationText({ path: 'data.amount', expected: [{ numeric: ['>', 100] }], actual: 50, reason: 'no value matches' })).toBe(
      'data.amount: expected a number > 100, the event has 50',
    );
  });

  it('says a field the event lacks, and one the pattern wants absent', () => {
    expect(explanationText({ path: 'data.id', expected: [{ exists: true }], reason: 'the event has no value at this path' })).toBe('data.id: expected any value, the event has none');
    expect(explanationText({ path: 'data.x', expected: [{ exists: false }], actual: 'y', reason: 'the field exists; the pattern requires it to be absent' })).toBe(
      'data.x: expected no value, the event has "y"',
    );
  });

  it('keeps a reason the line does not say, and names the closest $or branch', () => {
    expect(explanationText({ path: 'data.items.sku', expected: ['a'], actual: ['a', 'b'], reason: 'the values that match are in array elements where the field also has values that do not match' })).toBe(
      'data.items.sku: expected "a", the event has ["a","b"]; the values that match are in array elements where the field also has values that do not match',
    );
    expect(explanationText({ path: 'type', expected: ['a', 'b'], actual: 'c', reason: 'no $or branch matches; in the closest (2 of 3): no value matches' })).toBe(
      'type: expected "a" or "b", the event has "c" (no $or branch matches: this is the closest, branch 2 of 3)',
    );
  });

  it('writes each operator in words', () => {
    expect(alternativeText({ prefix: 'ord' })).toBe('a text starting with "ord"');
    expect(alternativeText({ suffix: { 'equals-ignore-case': '.PNG' } })).toBe('a text ending with ".PNG" in any case');
    expect(alternativeText({ 'equals-ignore-case': 'x' })).toBe('"x" in any case');
    expect(alternativeText({ wildcard: 'order.*' })).toBe('a text like "order.*"');
    expect(alternativeText({ cidr: '10.0.0.0/24' })).toBe('an IP address in 10.0.0.0/24');
    expect(alternativeText({ numeric: ['>=', 0, '<', 5] })).toBe('a number ≥ 0 and < 5');
    expect(alternativeText({ 'anything-but': ['a', 'b'] })).toBe('anything but "a", "b"');
    expect(alternativeText({ 'anything-but': { prefix: ['a', 'b'] } })).toBe('anything but a text starting with "a" or a text starting with "b"');
    expect(alternativeText(null)).toBe('null');
    expect(alternativeText({ regex: 'x' })).toBe('{"regex":"x"}');
  });

  it('lists five alternatives at most, and cuts long values', () => {
    expect(expectedText([1, 2, 3, 4, 5, 6, 7])).toBe('1, 2, 3, 4, 5 or one of 2 more');
    expect(expectedText([])).toBe('nothing');
    expect(explanationText({ path: 'data', expected: ['x'], actual: 'y'.repeat(100), reason: 'no value matches' })).toMatch(/the event has "y{58}…$/);
  });
});

describe('verdicts', () => {
  it('explains a rule that does not match and a matching rule that is disabled', () => {
    expect(verdictRow({ rule: 'big', state: 'ENABLED', match: false, explanation: { path: 'data.amount', expected: [{ numeric: ['>', 100] }], actual: 20, reason: 'no value matches' } })).toEqual({
      rule: 'big',
      state: 'ENABLED',
      match: false,
      why: 'data.amount: expected a number > 100, the event has 20',
    });
    expect(verdictRow({ rule: 'off', state: 'DISABLED', match: true }).why).toMatch(/disabled: it would receive nothing/);
    expect(verdictRow({ rule: 'created', state: 'ENABLED', match: true }).why).toBe('');
  });

  it('counts the rules that match', () => {
    expect(verdictSummary({ matchedCount: 1, rules: [{ rule: 'a', match: true }, { rule: 'b', match: false }] })).toBe('1 of 2 rules matches the event.');
    expect(verdictSummary({ rules: [{ rule: 'a', match: true, state: 'DISABLED' }, { rule: 'b', match: true }] })).toBe('2 of 2 rules match the event (1 of them disabled, which receives nothing).');
    expect(verdictSummary({ rules: [{ rule: 'b', match: false }] })).toBe("None of the bus's 1 rule matches the event: it would go nowhere.");
    expect(verdictSummary({ rules: [] })).toBe('The bus has no rules: the event would go nowhere.');
  });
});

// A trace as docs/events.md shows it: rule created matched and its target hook failed once, then took the event;
// rule big did not match.
const attempt = (id: string, type: string, attemptNo: number, more: Partial<BusLogRecord> = {}): BusLogRecord => ({
  id,
  type,
  time: `2026-12-01T09:14:0${id}.000Z`,
  eventId: '42',
  eventSource: 'shop.web',
  rule: 'created',
  target: 'hook',
  attempt: attemptNo,
  ...more,
});

const bigVerdict = { rule: 'big', state: 'ENABLED' as const, match: false, explanation: { path: 'data.amount', expected: [{ numeric: ['>', 100] }], actual: 50, reason: 'no value matches' } };
const baseTrace: EventTrace = {
  event: { sequence: 9, storedAt: '2026-12-01T09:14:03.120Z', event: { id: '42', source: 'shop.web' } as never },
  matchedFrom: 'log',
  rules: [bigVerdict, { rule: 'created', state: 'ENABLED', match: true }],
  log: [
    { id: '1', type: 'EVENT_RECEIPT', time: '2026-12-01T09:14:03.200Z', eventId: '42' },
    { id: '2', type: 'RULE_MATCH', rule: 'created', time: '2026-12-01T09:14:03.300Z' },
    attempt('4', 'INVOCATION_ATTEMPT_RETRYABLE_FAILURE', 1, { httpStatus: 503, errorClass: 'http-5xx', latencyMs: 3.1, message: 'http: POST … answered 503', snippet: 'upstream busy' }),
    attempt('6', 'INVOCATION_ATTEMPT_SUCCESS', 2, { latencyMs: 2.4 }),
  ],
  deadLetters: [],
};

describe('traceModel', () => {
  it('turns a failed then successful sequence into a timeline with the answers, and says failed then delivered', () => {
    const m = traceModel(baseTrace, { created: ['hook'] }, 'INFO');
    expect(m.fromLog).toBe(true);
    expect(m.routedAt).toBe('2026-12-01T09:14:03.200Z');
    expect(m.logNote).toBeUndefined();
    expect(m.matched).toHaveLength(1);
    const [hook] = m.matched[0].targets;
    expect(hook).toMatchObject({ target: 'hook', state: 'recovered', stateText: 'Delivered at attempt 2, after 1 failed attempt.' });
    expect(hook.steps.map((s) => [s.title, s.outcome, s.detail, s.answer])).toEqual([
      ['Attempt 1', 'Failed, will retry', 'HTTP 503 · http-5xx · 3.1 ms', 'upstream busy'],
      ['Attempt 2', 'Delivered', '2.4 ms', undefined],
    ]);
    expect(hook.steps[0]).toMatchObject({ at: '2026-12-01T09:14:04.000Z', message: 'http: POST … answered 503', tone: 'orange' });
  });

  it('explains each rule that did not match in one line', () => {
    const m = traceModel(baseTrace, {}, 'INFO');
    expect(m.notMatched).toEqual([{ rule: 'big', state: 'ENABLED', why: 'data.amount: expected a number > 100, the event has 50' }]);
  });

  it('prefers what the router said then (RULE_NO_MATCH) to the explanation against the rule today', () => {
    const then = { path: 'type', expected: ['order.big'], actual: 'order.created', reason: 'no value matches' };
    const m = traceModel({ ...baseTrace, log: [...(baseTrace.log ?? []), { id: '3', type: 'RULE_NO_MATCH', rule: 'big', explanation: then as never }] }, {}, 'TRACE');
    expect(m.notMatched[0].why).toBe('type: expected "order.big", the event has "order.created"');
  });

  it('says why a rule that matches now got no copy when the verdicts come from the log', () => {
    const m = traceModel({ ...baseTrace, rules: [...(baseTrace.rules ?? []), { rule: 'later', state: 'ENABLED', match: false }] }, {}, 'INFO');
    expect(m.notMatched.find((r) => r.rule === 'later')?.why).toMatch(/created, enabled or changed after the event was routed/);
  });

  it('shows a dead-lettered target with its dead letter and its reason', () => {
    const dl = { id: '77', bus: 'orders', rule: 'created', target: 'hook', reason: 'http: 503', errorClass: 'retries-exhausted' as const, attempts: 3 };
    const trace: EventTrace = {
      ...baseTrace,
      log: [
        ...(baseTrace.log ?? []).slice(0, 2),
        attempt('4', 'INVOCATION_ATTEMPT_RETRYABLE_FAILURE', 1),
        attempt('5', 'INVOCATION_ATTEMPT_RETRYABLE_FAILURE', 2),
        attempt('6', 'INVOCATION_ATTEMPT_PERMANENT_FAILURE', 3),
        attempt('7', 'INVOCATION_DLQ', 3),
      ],
      deadLetters: [dl],
    };
    const m = traceModel(trace, { created: ['hook', 'audit'] }, 'ERROR');
    const [hook, audit] = m.matched[0].targets;
    expect(hook).toMatchObject({ state: 'dead-lettered', stateText: 'Given up after 3 attempts and dead-lettered (dead letter 77).', deadLetters: [dl] });
    expect(hook.steps[3]).toMatchObject({ title: 'Given up', outcome: 'Dead-lettered', detail: 'after 3 attempts' });
    // A target without records at level ERROR: no failure was logged.
    expect(audit).toMatchObject({ state: 'unknown', steps: [] });
    expect(audit.stateText).toMatch(/failures only \(level ERROR\).*set the log level to INFO/);
    expect(m.deadLetters).toEqual([dl]);
  });

  it('with no log at all: recomputed verdicts, each target unknown, and the log level to raise', () => {
    const trace: EventTrace = { ...baseTrace, matchedFrom: 'current-rules', log: [] };
    const m = traceModel(trace, { created: ['hook'] }, 'OFF');
    expect(m.fromLog).toBe(false);
    expect(m.verdictsNote).toMatch(/recomputed against today's rules/);
    expect(m.logNote).toMatch(/^The bus logged nothing of this event\. The bus's log is off.*set its log level to INFO/);
    expect(m.matched[0].targets[0]).toMatchObject({ target: 'hook', state: 'unknown', steps: [], stateText: 'No attempt recorded: the bus logged nothing of this event.' });
    expect(m.routedAt).toBeUndefined();
  });

  it('knows a dead-lettered target from its dead letter when the bus logged nothing', () => {
    const dl = { id: '8', rule: 'created', target: 'hook', attempts: 2 };
    const m = traceModel({ ...baseTrace, matchedFrom: 'current-rules', log: [], deadLetters: [dl] }, {}, undefined);
    expect(m.matched[0].targets).toMatchObject([{ target: 'hook', state: 'dead-lettered', stateText: 'Dead-lettered after 2 attempts (dead letter 8); the bus logged no attempt.' }]);
  });

  it('keeps a rule the router matched that was deleted since, and notes a disabled one', () => {
    const trace: EventTrace = {
      ...baseTrace,
      rules: [{ rule: 'created', state: 'DISABLED', match: true }],
      log: [{ id: '1', type: 'EVENT_RECEIPT' }, { id: '2', type: 'RULE_MATCH', rule: 'old' }, attempt('3', 'INVOCATION_ATTEMPT_SUCCESS', 1, { rule: 'old', target: 't' })],
    };
    const m = traceModel(trace, {}, 'INFO');
    expect(m.matched.map((r) => [r.rule, r.gone, r.note])).toEqual([
      ['created', false, 'The rule is disabled now; it was enabled when the event was routed.'],
      ['old', true, 'The bus no longer has this rule: it was deleted after the event was routed.'],
    ]);
    expect(m.matched[1].targets[0]).toMatchObject({ target: 't', state: 'delivered', stateText: 'Delivered at the first attempt.' });
  });
});

describe('finalState', () => {
  const r = (type: string, n = 1): BusLogRecord => ({ type, attempt: n, target: 'hook' });
  it('says each end a target comes to', () => {
    expect(finalState([r('INVOCATION_ATTEMPT_RETRYABLE_FAILURE')], [], 'INFO')).toEqual({ state: 'pending', text: 'Attempt 1 failed; another is scheduled.' });
    expect(finalState([r('INVOCATION_ATTEMPT_PERMANENT_FAILURE'), r('INVOCATION_DROPPED')], [], 'INFO').state).toBe('dropped');
    expect(finalState([r('INVOCATION_ATTEMPT_PERMANENT_FAILURE'), r('INVOCATION_FAILURE')], [], 'INFO').state).toBe('failed');
    expect(finalState([r('EVENT_FILTERED')], [], 'INFO').state).toBe('filtered');
    expect(finalState([r('INVOCATION_DLQ', 3), r('EVENT_REDRIVEN', 3)], [], 'INFO')).toEqual({ state: 'pending', text: 'Redriven from its dead letter; no attempt recorded since.' });
    expect(finalState([r('INVOCATION_ATTEMPT_PERMANENT_FAILURE', 3), r('INVOCATION_DLQ', 3), r('EVENT_REDRIVEN', 3), r('INVOCATION_ATTEMPT_SUCCESS')], [], 'INFO')).toEqual({
      state: 'recovered',
      text: 'Delivered after a redrive, at attempt 1, after 1 failed attempt.',
    });
  });

  it('says what each log level records when a target logged nothing', () => {
    expect(finalState([], [], 'TRACE').text).toBe(noLogText('TRACE'));
    expect(noLogText('INFO')).toMatch(/expired/);
    expect(noLogText(undefined)).toMatch(/INFO records every attempt/);
  });

  it('writes a step that is not an attempt without the attempt as its title', () => {
    expect(stepOf({ id: '9', type: 'EVENT_REDRIVEN', target: 'hook', message: 'dead letter 7 redriven' })).toMatchObject({ key: '9', title: 'Redrive', outcome: 'Redriven', detail: '', message: 'dead letter 7 redriven' });
  });
});

describe('replay', () => {
  const archive = (name: string, createdAt: string) => ({ name, createdAt });

  it('needs an archive of the bus that existed when the event was stored', () => {
    expect(replayChoice('orders', [], '2026-12-01T09:00:00Z')).toEqual({ kind: 'none', text: expect.stringMatching(/^Replaying needs an archive of the bus: bus orders has none/) });
    expect(replayChoice('orders', [archive('late', '2026-12-01T10:00:00Z')], '2026-12-01T09:00:00Z').kind).toBe('too-late');
    expect(replayChoice('orders', [archive('all', '2026-11-01T00:00:00Z'), archive('late', '2026-12-01T10:00:00Z')], '2026-12-01T09:00:00Z')).toEqual({ kind: 'archives', archives: ['all'] });
  });

  it('replays the second around the stored time to every rule, never ending in the future', () => {
    const b = replayBody('all', { id: '42', source: 'shop' }, '2026-12-01T09:14:03.120Z', now);
    expect(b).toMatchObject({ archive: 'all', eventStartTime: '2026-12-01T09:14:02.120Z', eventEndTime: '2026-12-01T09:14:04.120Z', destination: {} });
    expect(b.name).toBe('event-42-20261201-120000');
    const justNow = replayBody('all', { id: '42' }, '2026-12-01T11:59:59.500Z', now);
    expect(justNow.eventEndTime).toBe('2026-12-01T12:00:00.000Z');
  });

  it('names a replay with the characters the API allows, at most 64', () => {
    expect(replayName('order/1 ✓', now)).toBe('event-order-1-20261201-120000');
    expect(replayName('x'.repeat(100), now)).toHaveLength(64);
    expect(replayName('///', now)).toBe('event-20261201-120000');
    expect(replayName('x'.repeat(100), now)).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('cuts a description to the bytes the API takes', () => {
    expect(new TextEncoder().encode(cutBytes('é'.repeat(400), 512)).length).toBeLessThanOrEqual(512);
    expect(cutBytes('short', 512)).toBe('short');
  });

  it('says how a replay goes and when it is over', () => {
    expect(replayText({ name: 'r', state: 'RUNNING', eventsReplayed: 1 })).toBe('Replay r: running, 1 event replayed so far.');
    expect(replayText({ name: 'r', state: 'FAILED', eventsReplayed: 0, stateReason: 'the archive r was deleted' })).toBe('Replay r: failed after 0 events replayed: the archive r was deleted.');
    expect(replayDone({ state: 'COMPLETED' })).toBe(true);
    expect(replayDone({ state: 'STARTING' })).toBe(false);
  });
});

describe('where an event is stored', () => {
  it('names the events of one call apart, and says where each is', () => {
    const first = { sequence: 42, index: 0 };
    const third = { sequence: 42, index: 2 };
    expect(storedKey(first)).not.toBe(storedKey(third));
    expect(storedKey({ sequence: 42 })).toBe(storedKey(first));
    expect(storedPlace(first)).toBe('sequence 42');
    expect(storedPlace(third)).toBe('sequence 42, event 3 of its call');
    expect(storedPlace({})).toBe('');
  });
});
