/**
 * What the dashboard shows (issue 30): each bus's events and delivery latency over the last hour or day, shaped for
 * charts from GET /api/v1/metrics, and the connectors that need attention, from GET /api/v1/runtime/connectors, the
 * worst first, each with the console page where it is fixed. Pure: no React here.
 */
import type { components } from '../api/schema';
import { durationText } from '../format';
import { clockTime, failureCause, successOf, type DeliveryFailure, type Success } from '../health';
import { connectorOwner, type ConnectorOwner } from './owner';

export { connectorOwner, type ConnectorKind, type ConnectorOwner } from './owner';

type Schemas = components['schemas'];
export type MetricsHistory = Schemas['MetricsHistory'];
type RuntimeConnector = Schemas['RuntimeConnector'];

/** The ranges the API keeps: the last hour (a point every 10 s) and the last day (every 5 min). */
export const RANGES = ['1h', '1d'] as const;
export type Range = (typeof RANGES)[number];

/** rangeLabels are the range switch's labels; rangeWords say the range in a sentence. */
export const rangeLabels: Record<Range, string> = { '1h': 'Last hour', '1d': 'Last day' };
export const rangeWords: Record<Range, string> = { '1h': 'the last hour', '1d': 'the last day' };

/** rangeOf reads the range from the address's ?range=: the last hour unless it says 1d. */
export function rangeOf(param: string | null | undefined): Range {
  return param === '1d' ? '1d' : '1h';
}

export const COUNT_METRICS = ['in', 'matched', 'delivered', 'failed', 'deadLettered'] as const;
export type CountMetric = (typeof COUNT_METRICS)[number];

/** metricLabels name the counts in the charts' legends and the totals. */
export const metricLabels: Record<CountMetric, string> = {
  in: 'In',
  matched: 'Matched',
  delivered: 'Delivered',
  failed: 'Failed',
  deadLettered: 'Dead-lettered',
};

/**
 * fromTargets says where a bus's count comes from (domain/history): its router's series counts the events in and
 * those that matched at least one rule; delivered, failed and dead-lettered exist on its targets' series only, so
 * they are summed over them. Rules' series are not used: a rule's matched counts an event once per rule it
 * matched, the bus's once.
 */
const fromTargets: Record<CountMetric, boolean> = {
  in: false,
  matched: false,
  delivered: true,
  failed: true,
  deadLettered: true,
};

/**
 * SeriesIn is a series as the API answers it. A point's v is null in a step in which nothing was delivered
 * (latencyMs), although schema.d.ts types it as a number only.
 */
export interface SeriesIn {
  bus?: string;
  rule?: string;
  target?: string;
  metric?: string;
  points?: { t?: string; v?: number | null }[];
}

/**
 * BusRow is one step of a bus's charts: t in milliseconds since the epoch (the step's end), the events of the step,
 * and the mean delivery latency in milliseconds; null where no series has a value (a gap in the chart).
 */
export type BusRow = { t: number; latencyMs: number | null } & Record<CountMetric, number | null>;

/** BusTotals are a bus's events over the range and its mean delivery latency (null when nothing was delivered). */
export type BusTotals = { latencyMs: number | null } & Record<CountMetric, number>;

export interface BusHistory {
  bus: string;
  /** rows are the steps, oldest first. */
  rows: BusRow[];
  totals: BusTotals;
}

/**
 * Latency is a target's mean latency in one step, with the events it delivered in it (undefined when its delivered
 * series lacks the step).
 */
export interface Latency {
  ms: number;
  delivered?: number;
}

/** pointsOf reads a series' points as [time in ms, value or null]; a point without a readable time is left out. */
function pointsOf(s: SeriesIn | undefined): [number, number | null][] {
  const out: [number, number | null][] = [];
  for (const p of s?.points ?? []) {
    const t = Date.parse(p.t ?? '');
    if (!Number.isNaN(t)) out.push([t, typeof p.v === 'number' ? p.v : null]);
  }
  return out;
}

/**
 * meanLatency is the mean of latencies weighted by the events each delivered when every one of them says how many,
 * else their plain mean; null for none. A latency is only there when its target delivered something, so a
 * weight of 0 or none means its delivered series lacks the step.
 */
export function meanLatency(ls: readonly Latency[]): number | null {
  if (ls.length === 0) return null;
  if (ls.every((l) => (l.delivered ?? 0) > 0)) {
    const n = ls.reduce((s, l) => s + l.delivered!, 0);
    return ls.reduce((s, l) => s + l.ms * l.delivered!, 0) / n;
  }
  return ls.reduce((s, l) => s + l.ms, 0) / ls.length;
}

const isBus = (s: SeriesIn) => !s.rule && !s.target;
const isTarget = (s: SeriesIn) => !!s.rule && !!s.target;

/** busHistory shapes the series of one bus (all of them have its name). */
function busHistory(bus: string, series: readonly SeriesIn[]): BusHistory {
  const rows = new Map<number, BusRow>();
  const row = (t: number) => {
    let r = rows.get(t);
    if (!r) {
      r = { t, in: null, matched: null, delivered: null, failed: null, deadLettered: null, latencyMs: null };
      rows.set(t, r);
    }
    return r;
  };
  for (const m of COUNT_METRICS) {
    const used = series.filter((s) => s.metric === m && (fromTargets[m] ? isTarget(s) : isBus(s)));
    for (const s of used) {
      for (const [t, v] of pointsOf(s)) {
        const r = row(t);
        if (v !== null) r[m] = (r[m] ?? 0) + v;
      }
    }
  }
  const latencies: Latency[] = [];
  const byStep = new Map<number, Latency[]>();
  for (const s of series.filter((x) => x.metric === 'latencyMs' && isTarget(x))) {
    const ofTarget = series.find((x) => x.metric === 'delivered' && x.rule === s.rule && x.target === s.target);
    const delivered = new Map(pointsOf(ofTarget));
    for (const [t, v] of pointsOf(s)) {
      row(t);
      if (v === null) continue;
      const l = { ms: v, delivered: delivered.get(t) ?? undefined };
      latencies.push(l);
      const step = byStep.get(t);
      if (step) step.push(l);
      else byStep.set(t, [l]);
    }
  }
  const sorted = [...rows.values()].sort((a, b) => a.t - b.t);
  for (const r of sorted) r.latencyMs = meanLatency(byStep.get(r.t) ?? []);
  const totals = { latencyMs: meanLatency(latencies) } as BusTotals;
  for (const m of COUNT_METRICS) totals[m] = sorted.reduce((s, r) => s + (r[m] ?? 0), 0);
  return { bus, rows: sorted, totals };
}

/** busHistories shapes the metrics history for the charts: one history per bus, ordered by the bus's name. */
export function busHistories(series: readonly SeriesIn[] | undefined): BusHistory[] {
  const byBus = new Map<string, SeriesIn[]>();
  for (const s of series ?? []) {
    if (!s.bus) continue;
    const list = byBus.get(s.bus) ?? [];
    list.push(s);
    byBus.set(s.bus, list);
  }
  return [...byBus.keys()].sort().map((bus) => busHistory(bus, byBus.get(bus)!));
}

/**
 * countText writes a number with the locale's grouping and at most digits decimals: "1,234" events, "2.5" ms on a
 * latency axis. locale is for tests.
 */
export function countText(n: number, digits = 0, locale?: string): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: digits }).format(n);
}

/** latencyText writes a latency to a tenth of a millisecond under a second ("12.3 ms"), else to the millisecond. */
export function latencyText(ms: number | null): string {
  if (ms === null) return '—';
  return ms < 1000 ? `${Number(ms.toFixed(1))} ms` : durationText(Math.round(ms));
}

/** timeTick writes a time on the charts' time axis in the browser's zone: "14:05". locale and timeZone: for tests. */
export function timeTick(t: number, opts: { locale?: string; timeZone?: string } = {}): string {
  const { locale, timeZone } = opts;
  return new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone }).format(t);
}

/**
 * tooltipTime writes the time of the step a chart's tooltip is on, to the second, with the day when it is not
 * today (health.ts's clockTime); "" for no step: Recharts renders the tooltip's content before one is pointed at.
 */
export function tooltipTime(t: unknown, now: Date, opts: { locale?: string; timeZone?: string } = {}): string {
  return typeof t === 'number' && Number.isFinite(t) ? clockTime(new Date(t).toISOString(), now, opts) : '';
}

// The time axis' ticks: every quarter of an hour over the last hour, every 4 hours over the last day.
const tickEvery: Record<Range, number> = { '1h': 15 * 60_000, '1d': 4 * 3_600_000 };

/**
 * timeTicks are the round times between first and last (milliseconds) where the time axis has a tick. They are
 * round in UTC, and so in every zone whose offset is whole quarters of an hour, over the last hour.
 */
export function timeTicks(first: number, last: number, range: Range): number[] {
  const every = tickEvery[range];
  const out: number[] = [];
  for (let t = Math.ceil(first / every) * every; t <= last; t += every) out.push(t);
  return out;
}

/**
 * eventsChartLabel and latencyChartLabel are the charts' accessible names: what they show, on which bus, over
 * which range; step is the step in words ("10 s").
 */
export function eventsChartLabel(bus: string, range: Range, step: string): string {
  const per = step ? ` per ${step}` : '';
  const what = COUNT_METRICS.map((m) => metricLabels[m].toLowerCase()).join(', ');
  return `Events${per} on bus ${bus} over ${rangeWords[range]}: ${what}`;
}

export function latencyChartLabel(bus: string, range: Range): string {
  return `Mean delivery latency in milliseconds on bus ${bus} over ${rangeWords[range]}`;
}

const enc = encodeURIComponent;

/**
 * fixLink is the console page where what the connector runs is looked at and fixed: a target's page, the bus's
 * page for its router, sources and replays; the runtime page for a connector that is no bus's or whose names were
 * too long to be read back.
 */
export function fixLink(o: ConnectorOwner | undefined): string {
  if (!o?.whole) return '/runtime';
  if (o.kind === 'target') return `/buses/${enc(o.bus)}/rules/${enc(o.rule!)}/targets/${enc(o.name!)}`;
  return `/buses/${enc(o.bus)}`;
}

/** ownerTitle names what a connector runs, for the attention list: "Target hook", "Router"; the name for others. */
export function ownerTitle(o: ConnectorOwner | undefined, connector: string): { title: string; context: string } {
  switch (o?.kind) {
    case 'target':
      return { title: `Target ${o.name}`, context: `rule ${o.rule} on bus ${o.bus}` };
    case 'source':
      return { title: `Source ${o.name}`, context: `bus ${o.bus}` };
    case 'replay':
      return { title: `Replay ${o.name}`, context: `bus ${o.bus}` };
    case 'router':
      return { title: 'Router', context: `bus ${o.bus}` };
    default:
      return { title: `Connector ${connector}`, context: '' };
  }
}

/**
 * TROUBLES are the healths the attention list shows, the worst first (docs/health.md): FAILING (a record has
 * waited many attempts or minutes), DEAD_LETTERING (records were given up), RETRYING (the last attempt failed),
 * then FAILED (a task or the connector failed). FAILED comes last although nothing runs: the runtime restarts a
 * failed task by itself, backing off, and its events wait in the bus's stream, lost to no one; it belongs on the
 * list all the same, since a failure that comes back (a bad configuration) needs someone.
 */
export const TROUBLES = ['FAILING', 'DEAD_LETTERING', 'RETRYING', 'FAILED'] as const;
export type Trouble = (typeof TROUBLES)[number];

/** troubleOf is the trouble a connector is in, from its health, or from its state when its health says none. */
export function troubleOf(c: Pick<RuntimeConnector, 'health' | 'state'>): Trouble | undefined {
  const h = (TROUBLES as readonly string[]).includes(c.health ?? '') ? (c.health as Trouble) : undefined;
  return h ?? (c.state === 'FAILED' ? 'FAILED' : undefined);
}

export interface AttentionItem {
  connector: string;
  owner?: ConnectorOwner;
  trouble: Trouble;
  /** cause says why in a few words (health.ts's failureCause), or the first line of a failed task's trace. */
  cause?: string;
  /** message is the last failure's message when it says more than the cause. */
  message?: string;
  lastFailureAt?: string;
  /**
   * success says how the last success stands to the last failure (health.ts): none-since is "failing since" the
   * last success, never "no success since the task started".
   */
  success?: Success;
  link: string;
}

export interface Attention {
  /** items are the connectors in trouble, the worst first, then the longest in trouble first. */
  items: AttentionItem[];
  /**
   * unassigned counts the connectors no worker runs. They are one line, not one item each: every connector is
   * unassigned for a moment while the workers rebalance, and all of them are when no worker lives, which the
   * runtime page shows and fixes, not the targets'.
   */
  unassigned: number;
}

/** firstLine is the first non-empty line of a trace (a Java-style stack's message). */
const firstLine = (s: string | undefined) => s?.split('\n').find((l) => l.trim() !== '')?.trim();

/**
 * troubleSince is when the trouble began as far as the facts tell: the last success before the last failure, else
 * the last failure; a trouble without a time sorts last.
 */
function troubleSince(i: AttentionItem): number {
  const at = i.success?.kind === 'none-since' ? i.success.at : i.lastFailureAt;
  const t = Date.parse(at ?? '');
  return Number.isNaN(t) ? Infinity : t;
}

function attentionItem(c: RuntimeConnector, trouble: Trouble): AttentionItem {
  const connector = c.name ?? '';
  const owner = connectorOwner(connector);
  const f: DeliveryFailure | undefined = c.lastFailure;
  const cause = f ? failureCause(f) : firstLine(c.trace ?? c.tasks?.find((t) => t.trace)?.trace);
  return {
    connector,
    owner,
    trouble,
    cause,
    message: f?.message && f.message !== cause ? f.message : undefined,
    lastFailureAt: f?.at,
    success: successOf({ lastFailure: f, lastSuccessAt: c.lastSuccessAt }),
    link: fixLink(owner),
  };
}

/** attentionOf lists the connectors that need attention, the worst first, then the longest in trouble first. */
export function attentionOf(connectors: readonly RuntimeConnector[] | undefined): Attention {
  const items: AttentionItem[] = [];
  let unassigned = 0;
  for (const c of connectors ?? []) {
    const t = troubleOf(c);
    if (t) items.push(attentionItem(c, t));
    else if (c.state === 'UNASSIGNED') unassigned++;
  }
  items.sort(
    (a, b) =>
      TROUBLES.indexOf(a.trouble) - TROUBLES.indexOf(b.trouble) ||
      troubleSince(a) - troubleSince(b) ||
      a.connector.localeCompare(b.connector),
  );
  return { items, unassigned };
}
