import { describe, expect, it } from 'vitest';
import {
  attentionOf,
  busHistories,
  connectorOwner,
  countText,
  eventsChartLabel,
  fixLink,
  latencyChartLabel,
  latencyText,
  meanLatency,
  ownerTitle,
  rangeOf,
  timeTick,
  timeTicks,
  tooltipTime,
  troubleOf,
  type SeriesIn,
} from './dashboard';

const T0 = '2026-12-02T20:00:10Z';
const T1 = '2026-12-02T20:00:20Z';
const T2 = '2026-12-02T20:00:30Z';
const ms = (t: string) => Date.parse(t);

/** series makes a series of bus orders with values at T0, T1, T2 (as many as given). */
function series(metric: string, values: (number | null)[], at: { rule?: string; target?: string; bus?: string } = {}): SeriesIn {
  const times = [T0, T1, T2];
  return { bus: at.bus ?? 'orders', rule: at.rule, target: at.target, metric, points: values.map((v, i) => ({ t: times[i], v })) };
}
const hook = { rule: 'created', target: 'hook' };
const mail = { rule: 'created', target: 'mail' };

describe('rangeOf', () => {
  it.each([
    ['1d', '1d'],
    ['1h', '1h'],
    [null, '1h'],
    ['7d', '1h'],
  ])('%s → %s', (param, want) => {
    expect(rangeOf(param)).toBe(want);
  });
});

describe('busHistories', () => {
  it('takes in and matched from the bus and sums delivered, failed and dead-lettered over its targets', () => {
    const [h] = busHistories([
      series('in', [10, 20, 5]),
      series('matched', [8, 15, 5]),
      series('delivered', [4, 10, 5], hook),
      series('delivered', [3, 5, 0], mail),
      series('failed', [1, 0, 0], hook),
      series('failed', [0, 2, 0], mail),
      series('deadLettered', [0, 0, 1], hook),
      series('deadLettered', [0, 0, 0], mail),
    ]);
    expect(h.rows.map((r) => [r.in, r.matched, r.delivered, r.failed, r.deadLettered])).toEqual([
      [10, 8, 7, 1, 0],
      [20, 15, 15, 2, 0],
      [5, 5, 5, 0, 1],
    ]);
    expect(h.rows.map((r) => r.t)).toEqual([ms(T0), ms(T1), ms(T2)]);
  });

  it('does not add the targets’ in nor the rules’ matched to the bus’s', () => {
    // An event read by two targets, or matched by two rules, is still one event of the bus.
    const [h] = busHistories([
      series('in', [1]),
      series('matched', [1]),
      series('matched', [1], { rule: 'created' }),
      series('matched', [1], { rule: 'audit' }),
      series('in', [1], hook),
      series('in', [1], mail),
    ]);
    expect([h.rows[0].in, h.rows[0].matched]).toEqual([1, 1]);
  });

  it('leaves a gap where no series has the step, and sums the targets that have it', () => {
    // mail appeared at T1: its first step is T1; the bus's series lacks T2.
    const mailFromT1: SeriesIn = { bus: 'orders', ...mail, metric: 'delivered', points: [{ t: T1, v: 2 }, { t: T2, v: 5 }] };
    const [h] = busHistories([series('in', [3, 4]), mailFromT1, series('delivered', [1, 1, 1], hook)]);
    expect(h.rows.map((r) => [r.in, r.delivered])).toEqual([
      [3, 1],
      [4, 3],
      [null, 6],
    ]);
    expect(h.rows.map((r) => r.failed)).toEqual([null, null, null]);
  });

  it('keeps a null value as a gap, not a zero', () => {
    const [h] = busHistories([series('in', [2, null, 4])]);
    expect(h.rows.map((r) => r.in)).toEqual([2, null, 4]);
    expect(h.totals.in).toBe(6);
  });

  it('weighs the targets’ latency by what each delivered in the step', () => {
    const [h] = busHistories([
      series('delivered', [1, 3], hook),
      series('latencyMs', [100, 10], hook),
      series('delivered', [3, 1], mail),
      series('latencyMs', [20, 50], mail),
    ]);
    expect(h.rows.map((r) => r.latencyMs)).toEqual([(100 + 60) / 4, (30 + 50) / 4]);
    // Over the range: (100 + 30 + 60 + 50) / 8.
    expect(h.totals.latencyMs).toBe(30);
  });

  it('takes the plain mean of the latencies when a target’s delivered series lacks the step', () => {
    const [h] = busHistories([series('latencyMs', [100], hook), series('delivered', [3], mail), series('latencyMs', [20], mail)]);
    expect(h.rows[0].latencyMs).toBe(60);
  });

  it('keeps a step without deliveries as a latency gap and leaves it out of the mean', () => {
    const [h] = busHistories([series('delivered', [2, 0, 2], hook), series('latencyMs', [10, null, 30], hook)]);
    expect(h.rows.map((r) => r.latencyMs)).toEqual([10, null, 30]);
    expect(h.totals.latencyMs).toBe(20);
  });

  it('totals each count over the range, and has no latency when nothing was delivered', () => {
    const [h] = busHistories([series('in', [1, 2, 3]), series('failed', [0, 4, 1], hook), series('latencyMs', [null, null, null], hook)]);
    expect(h.totals).toEqual({ in: 6, matched: 0, delivered: 0, failed: 5, deadLettered: 0, latencyMs: null });
  });

  it('makes one history per bus, ordered by name', () => {
    const hs = busHistories([series('in', [1], { bus: 'payments' }), series('in', [2], { bus: 'orders' }), series('delivered', [1], { ...hook, bus: 'payments' })]);
    expect(hs.map((h) => [h.bus, h.totals.in, h.totals.delivered])).toEqual([
      ['orders', 2, 0],
      ['payments', 1, 1],
    ]);
  });

  it('has no history without series, and leaves out points without a readable time', () => {
    expect(busHistories(undefined)).toEqual([]);
    expect(busHistories([{ bus: 'orders', metric: 'in', points: [{ t: 'soon', v: 1 }, { v: 2 }] }])[0].rows).toEqual([]);
  });
});

describe('meanLatency', () => {
  it.each([
    ['none', [], null],
    ['weighted', [{ ms: 10, delivered: 1 }, { ms: 40, delivered: 2 }], 30],
    ['plain when a weight is missing', [{ ms: 10, delivered: 1 }, { ms: 40 }], 25],
  ] as const)('%s', (_, ls, want) => {
    expect(meanLatency(ls)).toBe(want);
  });
});

describe('texts', () => {
  it.each([
    [null, '—'],
    [12.345, '12.3 ms'],
    [0.04, '0 ms'],
    [1234.4, '1.234 s'],
    [125_000, '2 min 5 s'],
  ])('latency %s → %s', (v, want) => {
    expect(latencyText(v)).toBe(want);
  });

  it.each([
    [1234567, 0, '1,234,567'],
    [2.6, 0, '3'],
    [2.56, 1, '2.6'],
    [1500, 1, '1,500'],
  ])('writes %s with grouping and at most %s decimals: %s', (n, digits, want) => {
    expect(countText(n, digits, 'en-US')).toBe(want);
  });

  it('writes the time axis in hours and minutes', () => {
    const opts = { locale: 'en-US', timeZone: 'UTC' };
    expect(timeTick(ms(T1), opts)).toBe('20:00');
    expect(timeTick(ms('2026-12-02T07:05:00Z'), opts)).toBe('07:05');
  });

  it.each([
    ['1h', '2026-12-02T19:03:10Z', '2026-12-02T20:03:00Z', ['19:15', '19:30', '19:45', '20:00']],
    ['1d', '2026-12-01T20:05:00Z', '2026-12-02T20:00:00Z', ['00:00', '04:00', '08:00', '12:00', '16:00', '20:00']],
    ['1h', '2026-12-02T20:01:00Z', '2026-12-02T20:02:00Z', []],
  ] as const)('ticks the %s axis at round times from %s to %s', (range, first, last, want) => {
    expect(timeTicks(ms(first), ms(last), range).map((t) => timeTick(t, { locale: 'en-US', timeZone: 'UTC' }))).toEqual(want);
  });

  it('writes the tooltip’s time to the second, with the day when it is not today, and nothing before a step is pointed at', () => {
    const now = new Date('2026-12-02T20:20:00Z');
    const opts = { locale: 'en-GB', timeZone: 'UTC' };
    expect(tooltipTime(ms(T1), now, opts)).toBe('20:00:20');
    expect(tooltipTime(ms('2026-12-01T23:55:00Z'), now, opts)).toBe('1 Dec, 23:55');
    expect(tooltipTime(undefined, now, opts)).toBe('');
    expect(tooltipTime('20:00', now, opts)).toBe('');
  });

  it('names the charts after what they show, the bus and the range', () => {
    expect(eventsChartLabel('orders', '1h', '10 s')).toBe('Events per 10 s on bus orders over the last hour: in, matched, delivered, failed, dead-lettered');
    expect(latencyChartLabel('orders', '1d')).toBe('Mean delivery latency in milliseconds on bus orders over the last day');
  });
});

describe('connectorOwner', () => {
  it.each([
    ['eb.acc1.orders.router', { kind: 'router', bus: 'orders', whole: true }],
    ['eb.acc1.orders.source.tick', { kind: 'source', bus: 'orders', name: 'tick', whole: true }],
    ['eb.acc1.orders.=replay.r1', { kind: 'replay', bus: 'orders', name: 'r1', whole: true }],
    ['eb.acc1.orders.created.hook', { kind: 'target', bus: 'orders', rule: 'created', name: 'hook', whole: true }],
    // Dots and slashes are escaped in a part.
    ['eb.acc1.shop=2Fprod.v1=2E2.hook', { kind: 'target', bus: 'shop/prod', rule: 'v1.2', name: 'hook', whole: true }],
    // A part too long to keep whole ends with a hash: kept as it is.
    ['eb.acc1.very-long=0123456789abcdef.router', { kind: 'router', bus: 'very-long=0123456789abcdef', whole: false }],
  ])('%s', (name, want) => {
    expect(connectorOwner(name)).toEqual(want);
  });

  it.each(['my-connector', 'eb.acc1.orders', 'eb.acc1.orders.created', 'eb.acc1.orders.a.b.c'])('%s is no bus’s', (name) => {
    expect(connectorOwner(name)).toBeUndefined();
  });
});

describe('fixLink', () => {
  it.each([
    ['eb.a.orders.created.hook', '/buses/orders/rules/created/targets/hook'],
    ['eb.a.shop=2Fprod.created.hook', '/buses/shop%2Fprod/rules/created/targets/hook'],
    ['eb.a.orders.source.tick', '/buses/orders'],
    ['eb.a.orders.router', '/buses/orders'],
    ['eb.a.orders.=replay.r1', '/buses/orders'],
    ['eb.a.orders.created.long=0123456789abcdef', '/runtime'],
    ['worker-own', '/runtime'],
  ])('%s → %s', (name, want) => {
    expect(fixLink(connectorOwner(name))).toBe(want);
  });

  it('titles what the connector runs', () => {
    expect(ownerTitle(connectorOwner('eb.a.orders.created.hook'), '')).toEqual({ title: 'Target hook', context: 'rule created on bus orders' });
    expect(ownerTitle(connectorOwner('eb.a.orders.router'), '')).toEqual({ title: 'Router', context: 'bus orders' });
    expect(ownerTitle(undefined, 'worker-own')).toEqual({ title: 'Connector worker-own', context: '' });
  });
});

describe('troubleOf', () => {
  it.each([
    [{ health: 'FAILING', state: 'RUNNING' }, 'FAILING'],
    [{ health: 'DEAD_LETTERING', state: 'RUNNING' }, 'DEAD_LETTERING'],
    [{ health: 'RETRYING', state: 'RUNNING' }, 'RETRYING'],
    [{ health: 'FAILED', state: 'RUNNING' }, 'FAILED'],
    [{ health: 'PENDING', state: 'FAILED' }, 'FAILED'],
    [{ health: 'HEALTHY', state: 'RUNNING' }, undefined],
    [{ health: 'PAUSED', state: 'PAUSED' }, undefined],
    [{ health: 'PENDING', state: 'UNASSIGNED' }, undefined],
  ])('%j → %s', (c, want) => {
    expect(troubleOf(c)).toBe(want);
  });
});

describe('attentionOf', () => {
  const failure = (at: string, extra: object = {}) => ({ at, errorClass: 'connection-refused', message: 'dial tcp 127.0.0.1:9: connect: connection refused', ...extra });

  it('lists the worst first, then the longest in trouble first', () => {
    const a = attentionOf([
      { name: 'eb.a.orders.created.retry', health: 'RETRYING', lastFailure: failure('2026-12-02T20:10:00Z') },
      { name: 'eb.a.orders.router', health: 'HEALTHY', state: 'RUNNING' },
      { name: 'eb.a.orders.created.dlq', health: 'DEAD_LETTERING', lastFailure: failure('2026-12-02T20:00:00Z') },
      { name: 'eb.a.orders.created.late', health: 'FAILING', lastFailure: failure('2026-12-02T20:15:00Z') },
      // No success since 19:00: in trouble longer than late, although its last failure is later.
      { name: 'eb.a.orders.created.early', health: 'FAILING', lastFailure: failure('2026-12-02T20:16:00Z'), lastSuccessAt: '2026-12-02T19:00:00Z' },
      { name: 'eb.a.orders.source.mqtt', state: 'FAILED', health: 'FAILED', trace: '\norg.x.ConnectException: broker refused\n\tat x.y' },
    ]);
    expect(a.items.map((i) => [i.connector, i.trouble])).toEqual([
      ['eb.a.orders.created.early', 'FAILING'],
      ['eb.a.orders.created.late', 'FAILING'],
      ['eb.a.orders.created.dlq', 'DEAD_LETTERING'],
      ['eb.a.orders.created.retry', 'RETRYING'],
      ['eb.a.orders.source.mqtt', 'FAILED'],
    ]);
    expect(a.unassigned).toBe(0);
  });

  it('says the cause, the message, since when and where to fix it', () => {
    const [i] = attentionOf([
      { name: 'eb.a.orders.created.hook', health: 'FAILING', lastFailure: failure('2026-12-02T20:16:00Z'), lastSuccessAt: '2026-12-02T19:00:00Z' },
    ]).items;
    expect(i).toMatchObject({
      cause: 'connection refused',
      message: 'dial tcp 127.0.0.1:9: connect: connection refused',
      lastFailureAt: '2026-12-02T20:16:00Z',
      success: { kind: 'none-since', at: '2026-12-02T19:00:00Z' },
      link: '/buses/orders/rules/created/targets/hook',
      owner: { kind: 'target', bus: 'orders', rule: 'created', name: 'hook' },
    });
  });

  it('says when nothing succeeded since the task started, and when it delivers again', () => {
    const [never, again] = attentionOf([
      { name: 'eb.a.orders.created.a', health: 'RETRYING', lastFailure: failure('2026-12-02T20:00:00Z') },
      { name: 'eb.a.orders.created.b', health: 'RETRYING', lastFailure: failure('2026-12-02T20:01:00Z'), lastSuccessAt: '2026-12-02T20:05:00Z' },
    ]).items;
    expect(never.success).toEqual({ kind: 'never' });
    expect(again.success).toEqual({ kind: 'recovered', at: '2026-12-02T20:05:00Z' });
  });

  it('takes a failed connector’s cause from the first line of its or its task’s trace, and keeps no message equal to the cause', () => {
    const [own, task] = attentionOf([
      { name: 'eb.a.orders.source.a', state: 'FAILED', trace: 'boom\n\tat x' },
      { name: 'eb.a.orders.source.b', state: 'RUNNING', health: 'FAILED', tasks: [{ id: 0, state: 'RUNNING' }, { id: 1, state: 'FAILED', trace: 'task boom' }] },
    ]).items;
    expect([own.cause, own.message, own.lastFailureAt]).toEqual(['boom', undefined, undefined]);
    expect(task.cause).toBe('task boom');
    const [http] = attentionOf([{ name: 'eb.a.o.r.t', health: 'RETRYING', lastFailure: { at: 'x', errorClass: 'error', message: 'oops' } }]).items;
    expect([http.cause, http.message]).toEqual(['oops', undefined]);
  });

  it('counts the unassigned connectors apart, and has nothing for healthy, paused or stopped ones', () => {
    const a = attentionOf([
      { name: 'eb.a.orders.router', state: 'UNASSIGNED', health: 'PENDING' },
      { name: 'eb.a.orders.created.hook', state: 'UNASSIGNED', health: 'PENDING' },
      { name: 'eb.a.orders.created.mail', state: 'PAUSED', health: 'PAUSED' },
      { name: 'eb.a.orders.created.sms', state: 'STOPPED', health: 'STOPPED' },
      { name: 'eb.a.orders.source.tick', state: 'RUNNING', health: 'HEALTHY' },
    ]);
    expect(a).toEqual({ items: [], unassigned: 2 });
    expect(attentionOf(undefined)).toEqual({ items: [], unassigned: 0 });
  });

  it('puts the failures without a time after the others of their trouble', () => {
    const a = attentionOf([
      { name: 'eb.a.o.r.b', health: 'RETRYING' },
      { name: 'eb.a.o.r.a', health: 'RETRYING' },
      { name: 'eb.a.o.r.c', health: 'RETRYING', lastFailure: failure('2026-12-02T20:00:00Z') },
    ]);
    expect(a.items.map((i) => i.connector)).toEqual(['eb.a.o.r.c', 'eb.a.o.r.a', 'eb.a.o.r.b']);
  });
});
