import { describe, expect, it } from 'vitest';
import {
  checkFilters,
  type DeadLetterFilters,
  defaultFilters,
  discardSummary,
  discardToast,
  entryText,
  eventIdOf,
  filterOf,
  filtersFromSearch,
  filtersSet,
  filtersToSearch,
  filterWords,
  findDeadLetter,
  firstOutcomes,
  type Followed,
  followedOf,
  keepWatching,
  listAll,
  listQuery,
  newDeadLetter,
  outcomeOf,
  outcomeText,
  presence,
  prettyEvent,
  type RedriveOutcome,
  redriveSummary,
  redriveToast,
  scanFrom,
  watchRedrive,
} from './deadLetters';

const pages: Record<string, { deadLetters: { id: string }[]; nextToken?: string }> = {
  '': { deadLetters: [{ id: '1' }, { id: '2' }], nextToken: 'b' },
  b: { deadLetters: [], nextToken: 'c' },
  c: { deadLetters: [{ id: '7' }] },
};

describe('findDeadLetter', () => {
  const seen: (string | undefined)[] = [];
  const load = async (t: string | undefined) => {
    seen.push(t);
    return pages[t ?? ''];
  };

  it('follows nextToken across empty pages until the id is found', async () => {
    expect(await findDeadLetter(load, '7')).toEqual({ id: '7' });
    expect(seen).toEqual([undefined, 'b', 'c']);
  });

  it('answers undefined after the last page, or after maxPages', async () => {
    expect(await findDeadLetter(load, '9')).toBeUndefined();
    expect(await findDeadLetter(load, '7', 2)).toBeUndefined();
  });
});

describe('dead letter texts', () => {
  it('pretty-prints the event', () => {
    expect(prettyEvent({ id: 'e1', data: { a: 1 } })).toBe('{\n  "id": "e1",\n  "data": {\n    "a": 1\n  }\n}');
    expect(prettyEvent(undefined)).toBe('');
  });

  it('says what happened to each entry', () => {
    expect(entryText({ id: '42' }, 'redriven')).toBe('Dead letter 42 was redriven.');
    expect(entryText({ id: '42', errorCode: 'TargetNotFound', errorMessage: 'target "hook" no longer exists' }, 'redriven')).toBe(
      'Dead letter 42 was not redriven: target "hook" no longer exists.',
    );
  });
});

const f = (patch: Partial<DeadLetterFilters>): DeadLetterFilters => ({ ...defaultFilters, ...patch });
const now = new Date('2026-12-02T20:00:00Z');

describe('filters', () => {
  it('asks for nothing by default: every dead letter', () => {
    expect(filterOf(defaultFilters, now)).toEqual({});
    expect(filtersToSearch(defaultFilters).toString()).toBe('');
    expect(filtersSet(defaultFilters)).toBe(0);
  });

  it('turns every filter into the API\'s fields', () => {
    const all = f({ bus: ' orders ', rule: 'created', target: 'hook', window: '1h', eventId: 'o-1', reason: '503', errorClass: 'retries-exhausted' });
    expect(filterOf(all, now)).toEqual({
      bus: 'orders',
      rule: 'created',
      target: 'hook',
      from: '2026-12-02T19:00:00.000Z',
      eventId: 'o-1',
      reason: '503',
      errorClass: 'retries-exhausted',
    });
    expect(filtersSet(all)).toBe(7);
    expect(listQuery(filterOf(all, now), 'tok', 50)).toMatchObject({ bus: 'orders', limit: 50, nextToken: 'tok' });
  });

  it('drops a rule without its bus and a target without its rule, as the API needs', () => {
    expect(filterOf(f({ rule: 'created', target: 'hook' }), now)).toEqual({});
    expect(filterOf(f({ bus: 'orders', target: 'hook' }), now)).toEqual({ bus: 'orders' });
    expect(filtersToSearch(f({ rule: 'created' })).toString()).toBe('');
  });

  it('reads from and to in the browser\'s zone', () => {
    const custom = f({ window: 'custom', from: '2026-12-01T10:00', to: '2026-12-01T11:30' });
    expect(filterOf(custom, now)).toEqual({ from: new Date('2026-12-01T10:00').toISOString(), to: new Date('2026-12-01T11:30').toISOString() });
    expect(filtersSet(custom)).toBe(1);
    expect(filterOf(f({ window: 'custom', from: 'soon' }), now)).toEqual({});
  });

  it('goes through the page\'s address and back', () => {
    const all = f({ bus: 'orders', rule: 'created', target: 'hook', window: 'custom', from: '2026-12-01T10:00', to: '', eventId: 'o-1', reason: 'refused', errorClass: 'permanent' });
    const sp = filtersToSearch(all);
    expect(sp.toString()).toBe('bus=orders&rule=created&target=hook&window=custom&from=2026-12-01T10%3A00&eventId=o-1&reason=refused&errorClass=permanent');
    expect(filtersFromSearch(sp)).toEqual(all);
    expect(filtersFromSearch(new URLSearchParams('window=forever&errorClass=odd&rule=r'))).toEqual(defaultFilters);
  });

  it('checks times and the reason\'s length before asking', () => {
    expect(checkFilters(f({ window: 'custom', from: 'x', to: '2026-12-01T10:00' }))).toEqual({ from: 'Give a date and time.' });
    expect(checkFilters(f({ window: 'custom', from: '2026-12-01T11:00', to: '2026-12-01T10:00' }))).toEqual({ to: 'To is before from.' });
    expect(checkFilters(f({ reason: 'é'.repeat(129) }))).toEqual({ reason: 'At most 256 bytes.' });
    expect(checkFilters(f({ reason: 'a'.repeat(256) }))).toEqual({});
  });

  it('says in words what "redrive all matching" selects', () => {
    expect(filterWords({})).toBe('every dead letter of the account');
    expect(filterWords({ bus: 'orders', rule: 'created', target: 'hook', reason: '503' })).toBe(
      'the dead letters of target hook of rule created on bus orders whose reason contains "503"',
    );
    expect(filterWords({ bus: 'orders', errorClass: 'permanent', from: 'a', to: 'b' }, (t) => `<${t}>`)).toBe(
      'the dead letters of bus orders of class permanent, given up between <a> and <b>',
    );
    expect(filterWords({ eventId: 'o-1' })).toBe('the dead letters of event o-1');
  });
});

type DL = Parameters<typeof newDeadLetter>[1][number];
// The schema types the event as an object of no known fields; a dead letter of the tests has an id in it.
const dl = (id: string, eventId: string, more: object = {}): DL => ({ id, bus: 'orders', rule: 'down', target: 'refused', reason: 'connection refused', event: { id: eventId } as never, ...more });

describe('following a redrive', () => {
  const followed: Followed = followedOf(dl('5', 'o-1', { time: '2026-12-02T19:00:00Z' }), [dl('5', 'o-1'), dl('3', 'o-1')])!;

  it('knows the event and the dead letters it had before', () => {
    expect(followed).toEqual({ id: '5', eventId: 'o-1', bus: 'orders', rule: 'down', target: 'refused', time: '2026-12-02T19:00:00Z', before: ['5', '3'] });
    expect(followedOf({ id: '6' }, [])).toBeUndefined();
    expect(eventIdOf({ event: { id: 7 } as never })).toBeUndefined();
  });

  it('takes as new only a dead letter of the same event and target that was not there before', () => {
    expect(newDeadLetter(followed, [dl('3', 'o-1')])).toBeUndefined();
    expect(newDeadLetter(followed, [dl('3', 'o-1'), dl('9', 'o-1', { target: 'other' })])).toBeUndefined();
    expect(newDeadLetter(followed, [dl('3', 'o-1'), dl('9', 'o-1')])?.id).toBe('9');
  });

  it.each([
    ['a new dead letter: again, at once', [dl('9', 'o-1')], 1000, 'again'],
    ['none yet within the window: watching', [], 3000, 'watching'],
    ['none when the window ends: delivered', [], 10_000, 'delivered'],
    ['a failed read at the end: still watching', undefined, 10_000, 'watching'],
  ] as const)('%s', (_, found, elapsed, kind) => {
    expect(outcomeOf(followed, found as never, elapsed).kind).toBe(kind);
  });

  it('keeps watching while one is watched, and reads once more after the window', () => {
    const watching: RedriveOutcome = { kind: 'watching', id: '5', eventId: 'o-1' };
    const done: RedriveOutcome = { kind: 'delivered', id: '6', eventId: 'o-2' };
    expect(keepWatching([watching, done], 0)).toBe(true);
    expect(keepWatching([watching, done], 10_500)).toBe(true);
    expect(keepWatching([watching], 11_000)).toBe(false);
    expect(keepWatching([done], 0)).toBe(false);
  });

  it('starts from the answer: refused entries say why, unknown ones are not followed', () => {
    const first = firstOutcomes(
      { entries: [{ id: '5' }, { id: '7', errorCode: 'TargetNotFound', errorMessage: 'target "gone" no longer exists' }, { id: '8' }] },
      [followed],
    );
    expect(first.map((o) => o.kind)).toEqual(['watching', 'not-redriven', 'not-followed']);
    expect(redriveSummary(first)).toBe('2 redriven, 1 not: 1 being watched, 1 not followed.');
  });

  it('says each outcome in words, the new dead letter and its reason included', () => {
    expect(outcomeText({ kind: 'delivered', id: '5', eventId: 'o-1' })).toBe('Dead letter 5 (event o-1): delivered (no new dead letter within 10 s).');
    expect(outcomeText({ kind: 'again', id: '5', eventId: 'o-1', deadLetter: dl('9', 'o-1') })).toBe(
      'Dead letter 5 (event o-1): dead-lettered again as dead letter 9 — connection refused',
    );
    expect(outcomeText({ kind: 'not-redriven', id: '7', message: 'target "gone" no longer exists.' })).toBe('Dead letter 7 was not redriven: target "gone" no longer exists.');
    expect(outcomeText({ kind: 'watching', id: '5', eventId: 'o-1' }, 5000)).toBe('Dead letter 5 (event o-1): redriven; watching for a new dead letter for 5 s…');
    expect(redriveSummary([{ kind: 'again', id: '5', eventId: 'o-1', deadLetter: {} }])).toBe('1 redriven: 1 dead-lettered again.');
  });

  it('says what a discard did', () => {
    expect(discardSummary({ deletedCount: 1, failedCount: 0 })).toBe('1 dead letter discarded.');
    expect(discardSummary({ deletedCount: 2, failedCount: 1 })).toBe('2 dead letters discarded, 1 not.');
  });
});

describe('watchRedrive', () => {
  const followed: Followed[] = [
    { id: '5', eventId: 'o-1', bus: 'orders', rule: 'down', target: 'refused', before: ['5'] },
    { id: '6', eventId: 'o-2', bus: 'orders', rule: 'down', target: 'refused', before: ['6'] },
  ];
  const first = firstOutcomes({ entries: [{ id: '5' }, { id: '6' }] }, followed);
  function clock() {
    let t = 0;
    return { now: () => t, sleep: async (ms: number) => void (t += ms) };
  }

  it('reports a dead letter again as soon as it shows and the others delivered when the window ends', async () => {
    const c = clock();
    const reads: string[] = [];
    const updates: string[][] = [];
    const load = async (f: Followed) => {
      reads.push(`${f.eventId}@${c.now()}`);
      return f.eventId === 'o-1' && c.now() >= 3000 ? [dl('9', 'o-1')] : [];
    };
    const out = await watchRedrive(first, followed, load, (o) => updates.push(o.map((x) => x.kind)), { ...c, windowMs: 5000, pollMs: 1000 });
    expect(out.map((o) => o.kind)).toEqual(['again', 'delivered']);
    // o-1 is read no more once it failed again; o-2 until the window ends.
    expect(reads.filter((r) => r.startsWith('o-1'))).toEqual(['o-1@1000', 'o-1@2000', 'o-1@3000']);
    expect(reads.filter((r) => r.startsWith('o-2')).length).toBe(5);
    expect(updates[2]).toEqual(['again', 'watching']);
    expect(updates.at(-1)).toEqual(['again', 'delivered']);
  });

  it('claims nothing when the reads fail to the end', async () => {
    const out = await watchRedrive(first.slice(0, 1), followed, () => Promise.reject(new Error('down')), () => {}, { ...clock(), windowMs: 2000, pollMs: 1000 });
    expect(out).toEqual([{ kind: 'not-followed', id: '5', why: 'its dead letters could not be read' }]);
  });

  it('stops when the page is left', async () => {
    let reads = 0;
    const out = await watchRedrive(first, followed, async () => (reads++, []), () => {}, { ...clock(), stopped: () => reads >= 2 });
    expect(reads).toBe(2);
    expect(out.map((o) => o.kind)).toEqual(['watching', 'watching']);
  });
});

describe('presence', () => {
  it('tells whether the dead letter is still there and which others its event has', () => {
    expect(presence('5', [dl('5', 'o-1'), dl('9', 'o-1')])).toEqual({ current: dl('5', 'o-1'), others: [dl('9', 'o-1')] });
    expect(presence('5', [dl('9', 'o-1')]).current).toBeUndefined();
  });
  it('looks from a minute before the dead letter\'s time', () => {
    expect(scanFrom('2026-12-02T20:00:30.5Z')).toBe('2026-12-02T19:59:30.500Z');
    expect(scanFrom(undefined)).toBeUndefined();
  });
  it('reads every page of a filtered list', async () => {
    const pages: Record<string, { deadLetters: { id: string }[]; nextToken?: string }> = { '': { deadLetters: [{ id: '1' }], nextToken: 'b' }, b: { deadLetters: [{ id: '2' }] } };
    expect(await listAll(async (t) => pages[t ?? ''])).toEqual([{ id: '1' }, { id: '2' }]);
  });
});

describe('toasts', () => {
  it('tells a redrive the API took whole, and leaves failures to the results', () => {
    expect(redriveToast({ redrivenCount: 1, failedCount: 0 })).toBe('Sent 1 dead letter back to its target');
    expect(redriveToast({ redrivenCount: 3 })).toBe('Sent 3 dead letters back to their targets');
    expect(redriveToast({ redrivenCount: 2, failedCount: 1 })).toBeUndefined();
    expect(redriveToast({ redrivenCount: 0, failedCount: 0 })).toBeUndefined();
    expect(redriveToast(undefined)).toBeUndefined();
  });
  it('tells a discard the API took whole', () => {
    expect(discardToast({ deletedCount: 1, failedCount: 0 })).toBe('Discarded 1 dead letter');
    expect(discardToast({ deletedCount: 2 })).toBe('Discarded 2 dead letters');
    expect(discardToast({ deletedCount: 2, failedCount: 1 })).toBeUndefined();
    expect(discardToast(undefined)).toBeUndefined();
  });
});
