import { describe, expect, it } from 'vitest';
import {
  anyLive,
  archiveCreateBody,
  archivePatchBody,
  archivePatternProblems,
  archiveToForm,
  canCancel,
  destinationText,
  inBatches,
  isTerminal,
  localInputOf,
  newReplayForm,
  patternSummary,
  percentOf,
  percentText,
  progressFraction,
  readAll,
  replayBody,
  replayedText,
  replayWindow,
  retentionDaysText,
  stateColor,
  validateArchive,
  validateReplay,
  windowText,
  type Archive,
  type Replay,
  type ReplayForm,
} from './replays';

// Times are built in the test's own zone, as the page reads datetime-local values in the browser's.
const now = new Date('2026-12-01T12:00:00');
const form = (patch: Partial<ReplayForm> = {}): ReplayForm => ({ ...newReplayForm(now, 'orders-2026'), name: 'fix-1234', ...patch });

describe('archive form', () => {
  it('reads an archive into the form, its pattern indented', () => {
    const a: Archive = { name: 'orders-2026', description: 'every order', eventPattern: { type: ['order.created'] } as never, retentionDays: 30 };
    expect(archiveToForm(a)).toEqual({ name: 'orders-2026', description: 'every order', pattern: '{\n  "type": [\n    "order.created"\n  ]\n}', retentionDays: '30' });
  });

  it('opens empty for a new archive: every event, kept until deleted', () => {
    expect(archiveToForm()).toEqual({ name: '', description: '', pattern: '', retentionDays: '0' });
  });

  it('reads a pattern the API answers as a string holding JSON', () => {
    expect(archiveToForm({ eventPattern: '{"source":["shop"]}' as never }).pattern).toBe('{\n  "source": [\n    "shop"\n  ]\n}');
  });

  it('accepts a valid form and turns it into the create body', () => {
    const f = { name: 'orders-2026', description: ' every order ', pattern: '{"type": ["order.created"]}', retentionDays: '30' };
    expect(validateArchive(f, true)).toEqual({});
    expect(archiveCreateBody(f)).toEqual({ name: 'orders-2026', description: 'every order', eventPattern: { type: ['order.created'] }, retentionDays: 30 });
  });

  it('leaves the pattern and description out of the create body when empty, retention 0 when empty', () => {
    expect(archiveCreateBody({ name: 'all', description: '', pattern: '  ', retentionDays: '' })).toEqual({ name: 'all', retentionDays: 0 });
  });

  it('refuses a missing or bad name, only when creating', () => {
    const f = { name: '', description: '', pattern: '', retentionDays: '0' };
    expect(validateArchive(f, true).name).toBe('A name is required.');
    expect(validateArchive({ ...f, name: 'orders.2026' }, true).name).toMatch(/Letters, digits/);
    expect(validateArchive({ ...f, name: 'x'.repeat(65) }, true).name).toMatch(/at most 64/);
    expect(validateArchive(f, false)).toEqual({});
  });

  it.each([
    ['-1', true],
    ['1.5', true],
    ['abc', true],
    ['36501', true],
    ['0', false],
    ['36500', false],
    ['', false],
  ])('retention days %j refused: %s', (days, refused) => {
    const e = validateArchive({ name: 'a', description: '', pattern: '', retentionDays: days }, true);
    expect(e.retentionDays !== undefined).toBe(refused);
  });

  it('says the pattern problems at their places, none for an empty pattern', () => {
    const f = { name: 'a', description: '', pattern: '{"type": "order.created"}', retentionDays: '0' };
    expect(archivePatternProblems(f).map((p) => p.path)).toEqual(['type']);
    expect(validateArchive(f, true).pattern).toBeDefined();
    expect(archivePatternProblems({ ...f, pattern: '' })).toEqual([]);
    expect(archivePatternProblems({ ...f, pattern: '{"type": ' })[0].message).toMatch(/not JSON/);
  });

  it('refuses a description over 512 bytes', () => {
    expect(validateArchive({ name: 'a', description: 'é'.repeat(257), pattern: '', retentionDays: '0' }, true).description).toBe('At most 512 bytes.');
  });

  describe('patch body', () => {
    const before: Archive = { name: 'a', description: 'old', eventPattern: { type: ['x'] } as never, retentionDays: 30 };

    it('holds only the fields changed', () => {
      expect(archivePatchBody({ ...archiveToForm(before), retentionDays: '90' }, before)).toEqual({ retentionDays: 90 });
      expect(archivePatchBody({ ...archiveToForm(before), description: 'new' }, before)).toEqual({ description: 'new' });
      expect(archivePatchBody(archiveToForm(before), before)).toEqual({});
    });

    it('does not count a pattern reformatted as changed', () => {
      expect(archivePatchBody({ ...archiveToForm(before), pattern: '{"type":["x"]}' }, before)).toEqual({});
    });

    it('sends a new pattern, and null for a pattern emptied (every event from then on)', () => {
      expect(archivePatchBody({ ...archiveToForm(before), pattern: '{"type":["y"]}' }, before)).toEqual({ eventPattern: { type: ['y'] } });
      expect(archivePatchBody({ ...archiveToForm(before), pattern: '' }, before)).toEqual({ eventPattern: null });
    });

    it('sends a pattern added to an archive of every event, and a retention back to 0', () => {
      const all: Archive = { name: 'a', retentionDays: 7 };
      expect(archivePatchBody({ ...archiveToForm(all), pattern: '{"source":["s"]}', retentionDays: '' }, all)).toEqual({ eventPattern: { source: ['s'] }, retentionDays: 0 });
    });
  });

  it('says the retention in words', () => {
    expect([0, undefined, 1, 30, 36500].map(retentionDaysText)).toEqual(['Until deleted', 'Until deleted', '1 day', '30 days', '36,500 days']);
  });

  it('sums a pattern up on one line, cut at max characters', () => {
    expect(patternSummary(undefined)).toBe('Every event');
    expect(patternSummary(null)).toBe('Every event');
    expect(patternSummary({ type: ['order.created'] })).toBe('{"type":["order.created"]}');
    const long = patternSummary({ type: ['order.created', 'order.cancelled', 'order.shipped'] }, 20);
    expect(long).toHaveLength(20);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('start-replay form', () => {
  it('opens on the archive given, the last hour, every rule; the custom fields hold the last hour', () => {
    const f = newReplayForm(now, 'orders-2026');
    expect(f).toMatchObject({ archive: 'orders-2026', window: 'hour', destination: 'all', from: '2026-12-01T11:00', to: '2026-12-01T12:00' });
  });

  it('writes a datetime-local value to the minute, in the local zone', () => {
    expect(localInputOf(new Date('2026-03-04T05:06:59'))).toBe('2026-03-04T05:06');
  });

  it('ends the presets now', () => {
    expect(replayWindow(form({ window: 'hour' }), now)).toEqual({ start: new Date('2026-12-01T11:00:00'), end: now });
    expect(replayWindow(form({ window: 'day' }), now)).toEqual({ start: new Date('2026-11-30T12:00:00'), end: now });
  });

  it('reads a custom window in the local zone, undefined when a time is not one', () => {
    expect(replayWindow(form({ window: 'custom', from: '2026-12-01T08:00', to: '2026-12-01T09:30' }), now)).toEqual({
      start: new Date('2026-12-01T08:00:00'),
      end: new Date('2026-12-01T09:30:00'),
    });
    expect(replayWindow(form({ window: 'custom', from: '', to: '2026-12-01T09:30' }), now)).toBeUndefined();
  });

  it('accepts the default form with a name', () => {
    expect(validateReplay(form(), now)).toEqual({});
  });

  it('wants a name of the API allowed characters and an archive', () => {
    expect(validateReplay(form({ name: '' }), now).name).toBe('A name is required.');
    expect(validateReplay(form({ name: 'fix 1234' }), now).name).toMatch(/Letters, digits/);
    expect(validateReplay(form({ archive: '' }), now).archive).toBe('Choose the archive to replay.');
  });

  it.each<[string, Partial<ReplayForm>, string, RegExp]>([
    ['a start that is not a time', { from: 'soon', to: '2026-12-01T10:00' }, 'from', /date and time/],
    ['an end that is not a time', { from: '2026-12-01T09:00', to: '' }, 'to', /date and time/],
    ['an end in the future', { from: '2026-12-01T11:00', to: '2026-12-01T12:01' }, 'to', /Not in the future/],
    ['an end before the start', { from: '2026-12-01T10:00', to: '2026-12-01T09:00' }, 'to', /After the start/],
    ['an end equal to the start', { from: '2026-12-01T10:00', to: '2026-12-01T10:00' }, 'to', /After the start/],
  ])('refuses a custom window with %s', (_, patch, field, message) => {
    expect(validateReplay(form({ window: 'custom', ...patch }), now)[field]).toMatch(message);
  });

  it('accepts a custom window ending now, and refuses one ending before the archive was created', () => {
    const f = form({ window: 'custom', from: '2026-12-01T08:00', to: '2026-12-01T09:00' });
    expect(validateReplay({ ...f, to: '2026-12-01T12:00' }, now)).toEqual({});
    expect(validateReplay(f, now, new Date('2026-12-01T09:00:00').toISOString()).to).toMatch(/archive was created/);
    expect(validateReplay(f, now, new Date('2026-12-01T08:30:00').toISOString())).toEqual({});
  });

  it('ignores the custom fields for a preset', () => {
    expect(validateReplay(form({ window: 'day', from: 'x', to: '' }), now)).toEqual({});
  });

  it('wants the rules or the target the destination names', () => {
    expect(validateReplay(form({ destination: 'rules' }), now).rules).toMatch(/at least one rule/);
    expect(validateReplay(form({ destination: 'target' }), now).rule).toMatch(/rule of the target/);
    expect(validateReplay(form({ destination: 'target', rule: 'created' }), now).target).toBe('Choose the target.');
    expect(validateReplay(form({ destination: 'target', rule: 'created', target: 'printer' }), now)).toEqual({});
  });

  it.each([
    ['0', true],
    ['100001', true],
    ['2.5', true],
    ['fast', true],
    ['1', false],
    ['100000', false],
    ['', false],
  ])('rate %j refused: %s', (rate, refused) => {
    expect(validateReplay(form({ rate }), now).rate !== undefined).toBe(refused);
  });

  it('sends every rule by leaving the destination out, with the preset window in UTC', () => {
    expect(replayBody(form(), now)).toEqual({
      name: 'fix-1234',
      archive: 'orders-2026',
      eventStartTime: new Date('2026-12-01T11:00:00').toISOString(),
      eventEndTime: now.toISOString(),
    });
  });

  it('sends chosen rules, a description and a rate', () => {
    const b = replayBody(form({ destination: 'rules', rules: ['created', 'shipped'], description: ' again ', rate: '500' }), now);
    expect(b).toMatchObject({ description: 'again', destination: { rules: ['created', 'shipped'] }, rate: 500 });
  });

  it('sends one target of one rule, and not the rules picked before switching', () => {
    const b = replayBody(form({ destination: 'target', rules: ['stale'], rule: 'created', target: 'printer' }), now);
    expect(b.destination).toEqual({ target: { rule: 'created', target: 'printer' } });
  });

  it('sends a custom window as read in the local zone', () => {
    const b = replayBody(form({ window: 'custom', from: '2026-12-01T08:00', to: '2026-12-01T09:30' }), now);
    expect([b.eventStartTime, b.eventEndTime]).toEqual([new Date('2026-12-01T08:00:00').toISOString(), new Date('2026-12-01T09:30:00').toISOString()]);
  });

  it('throws on a window validateReplay would have refused', () => {
    expect(() => replayBody(form({ window: 'custom', from: '' }), now)).toThrow(/window/);
  });
});

describe('replay state and progress', () => {
  const states = ['STARTING', 'RUNNING', 'CANCELLING', 'COMPLETED', 'CANCELLED', 'FAILED', 'LOST', undefined];

  it('colours each state, gray for one not known', () => {
    expect(states.map(stateColor)).toEqual(['blue', 'blue', 'yellow', 'green', 'gray', 'red', 'gray', 'gray']);
  });

  it('knows which states ended', () => {
    expect(states.map(isTerminal)).toEqual([false, false, false, true, true, true, false, false]);
  });

  it('allows cancel only while STARTING or RUNNING', () => {
    expect(states.map(canCancel)).toEqual([true, true, false, false, false, false, false, false]);
  });

  it('refreshes the list while any replay has not ended', () => {
    expect(anyLive([{ state: 'COMPLETED' }, { state: 'CANCELLING' }])).toBe(true);
    expect(anyLive([{ state: 'COMPLETED' }, { state: 'FAILED' }])).toBe(false);
    expect(anyLive(undefined)).toBe(false);
  });

  const window = { eventStartTime: '2026-12-01T00:00:00Z', eventEndTime: '2026-12-02T00:00:00Z' };

  it('places the last event replayed in the window', () => {
    expect(progressFraction({ ...window, state: 'RUNNING', eventLastReplayedTime: '2026-12-01T06:00:00Z' })).toBe(0.25);
    expect(progressFraction({ ...window, state: 'CANCELLED', eventLastReplayedTime: '2026-12-01T18:00:00Z' })).toBe(0.75);
  });

  it('is unknown before any event was replayed or without a window, whole once COMPLETED', () => {
    expect(progressFraction({ ...window, state: 'STARTING' })).toBeUndefined();
    expect(progressFraction({ state: 'RUNNING', eventLastReplayedTime: '2026-12-01T06:00:00Z' })).toBeUndefined();
    expect(progressFraction({ ...window, state: 'COMPLETED' })).toBe(1);
  });

  it('keeps the fraction within 0 and 1', () => {
    expect(progressFraction({ ...window, state: 'RUNNING', eventLastReplayedTime: '2026-11-30T00:00:00Z' })).toBe(0);
    expect(progressFraction({ ...window, state: 'RUNNING', eventLastReplayedTime: '2026-12-03T00:00:00Z' })).toBe(1);
  });

  it('writes the percentage, never 100% before the end', () => {
    expect([undefined, 0, 0.25, 0.996, 1].map(percentText)).toEqual(['—', '0%', '25%', '99%', '100%']);
    expect([0.004, 0.5, 0.999, 1].map(percentOf)).toEqual([0, 50, 99, 100]);
  });

  it('says the counts, with the duplicates only when there are some', () => {
    expect(replayedText({ eventsReplayed: 1204, duplicates: 3 })).toBe('1,204 events replayed (3 already stored)');
    expect(replayedText({ eventsReplayed: 1, duplicates: 0 })).toBe('1 event replayed');
    expect(replayedText({})).toBe('0 events replayed');
  });

  it('says the destination in words', () => {
    expect(destinationText({ bus: 'orders' })).toBe('Every rule of orders');
    expect(destinationText(undefined)).toBe('Every rule');
    expect(destinationText({ bus: 'orders', rules: ['created'] })).toBe('Rule created of orders');
    expect(destinationText({ rules: ['a', 'b', 'c'] })).toBe('Rules a, b and c');
    expect(destinationText({ bus: 'orders', target: { rule: 'created', target: 'printer' } })).toBe('Target printer of rule created of orders');
  });

  it('says the window with its length', () => {
    const r: Replay = { eventStartTime: '2026-12-01T00:00:00Z', eventEndTime: '2026-12-01T01:30:00Z' };
    expect(windowText(r, (t) => `<${t}>`)).toBe('<2026-12-01T00:00:00Z> to <2026-12-01T01:30:00Z> (1 h 30 min)');
  });
});

describe('reading lists', () => {
  it('follows nextToken to the last page', async () => {
    const pages: Record<string, { items: number[]; nextToken?: string }> = { '': { items: [1, 2], nextToken: 'b' }, b: { items: [3], nextToken: 'c' }, c: { items: [4] } };
    const seen: (string | undefined)[] = [];
    const all = await readAll(async (t) => (seen.push(t), pages[t ?? '']));
    expect(all).toEqual([1, 2, 3, 4]);
    expect(seen).toEqual([undefined, 'b', 'c']);
  });

  it('stops after maxPages when the token never ends', async () => {
    let calls = 0;
    const all = await readAll(async () => (calls++, { items: [calls], nextToken: 'again' }), 3);
    expect(all).toEqual([1, 2, 3]);
  });

  it('maps in batches, keeping the order, never more at once than the batch', async () => {
    let running = 0;
    let most = 0;
    const out = await inBatches([1, 2, 3, 4, 5], 2, async (n) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5 - n));
      running--;
      return n * 10;
    });
    expect(out).toEqual([10, 20, 30, 40, 50]);
    expect(most).toBe(2);
  });
});
