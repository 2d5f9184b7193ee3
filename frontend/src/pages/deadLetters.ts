import type { components } from '../api/schema';

type DeadLetter = components['schemas']['DeadLetter'];
type DeadLetterList = components['schemas']['DeadLetterList'];

/**
 * findDeadLetter looks a dead letter up by id: the API has no GET by id, so the list is read page by page
 * (following nextToken, at most maxPages pages) until it holds the id. Undefined when it is not found.
 */
export async function findDeadLetter(
  load: (nextToken: string | undefined) => Promise<DeadLetterList>,
  id: string,
  maxPages = 20,
): Promise<DeadLetter | undefined> {
  let token: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await load(token);
    const hit = (page.deadLetters ?? []).find((d) => d.id === id);
    if (hit) return hit;
    if (!page.nextToken) return undefined;
    token = page.nextToken;
  }
  return undefined;
}

/** prettyEvent renders the original event as indented JSON, data included. */
export function prettyEvent(event: unknown): string {
  if (event === undefined || event === null) return '';
  return JSON.stringify(event, null, 2);
}

/** entryText says in plain words what happened to one dead letter of a redrive or discard. */
export function entryText(e: components['schemas']['DeadLetterEntryResult'], verb: 'redriven' | 'discarded'): string {
  if (e.errorCode || e.errorMessage) return `Dead letter ${e.id ?? ''} was not ${verb}: ${e.errorMessage ?? e.errorCode}.`.replace(/\.\.$/, '.');
  return `Dead letter ${e.id ?? ''} was ${verb}.`;
}

type DeadLetterFilter = components['schemas']['DeadLetterFilter'];

/*
 * The dead-letter list's filters (docs/dead-letters.md "List"): kept in the page's address, turned into the query of
 * GET /api/v1/dead-letters and into the filter of "redrive all matching".
 */

export type ErrorClass = '' | 'permanent' | 'retries-exhausted' | 'transform';

export const errorClassChoices: { value: ErrorClass; label: string }[] = [
  { value: '', label: 'Any error class' },
  { value: 'retries-exhausted', label: 'Retries exhausted' },
  { value: 'permanent', label: 'Permanent' },
  { value: 'transform', label: 'Transform' },
];

/** Window is when the dead letters were given up: a span up to now, any time, or from and to the user gives. */
export type Window = 'any' | '1h' | '24h' | '7d' | 'custom';

export const windowChoices: { value: Window; label: string }[] = [
  { value: '1h', label: 'Last hour' },
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: 'any', label: 'Any time' },
  { value: 'custom', label: 'From and to…' },
];

const windowMs: Record<'1h' | '24h' | '7d', number> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 };

export interface DeadLetterFilters {
  bus: string;
  /** rule needs bus, target needs rule (the API's rules): normalized drops them without. */
  rule: string;
  target: string;
  window: Window;
  /** from and to are datetime-local values ("2026-12-01T10:00", the browser's zone), read when window is custom. */
  from: string;
  to: string;
  eventId: string;
  /** reason is a text the reason contains, ignoring case. */
  reason: string;
  errorClass: ErrorClass;
}

export const defaultFilters: DeadLetterFilters = { bus: '', rule: '', target: '', window: 'any', from: '', to: '', eventId: '', reason: '', errorClass: '' };

const textKeys = ['bus', 'rule', 'target', 'eventId', 'reason'] as const;

/** normalized drops a rule without its bus and a target without its rule, and trims the texts. */
export function normalized(f: DeadLetterFilters): DeadLetterFilters {
  const out = { ...f };
  for (const k of textKeys) out[k] = f[k].trim();
  if (!out.bus) out.rule = '';
  if (!out.rule) out.target = '';
  return out;
}

/** filtersFromSearch reads the filters from the page's address; what is missing or unknown is its default. */
export function filtersFromSearch(sp: URLSearchParams): DeadLetterFilters {
  const w = sp.get('window');
  const c = sp.get('errorClass');
  return normalized({
    bus: sp.get('bus') ?? '',
    rule: sp.get('rule') ?? '',
    target: sp.get('target') ?? '',
    window: windowChoices.some((x) => x.value === w) ? (w as Window) : 'any',
    from: sp.get('from') ?? '',
    to: sp.get('to') ?? '',
    eventId: sp.get('eventId') ?? '',
    reason: sp.get('reason') ?? '',
    errorClass: errorClassChoices.some((x) => x.value === c) ? (c as ErrorClass) : '',
  });
}

/** filtersToSearch writes the filters into an address's query, leaving out defaults (filtersFromSearch's inverse). */
export function filtersToSearch(f: DeadLetterFilters): URLSearchParams {
  const n = normalized(f);
  const sp = new URLSearchParams();
  for (const k of ['bus', 'rule', 'target'] as const) if (n[k]) sp.set(k, n[k]);
  if (n.window !== 'any') sp.set('window', n.window);
  if (n.window === 'custom') {
    if (n.from.trim()) sp.set('from', n.from.trim());
    if (n.to.trim()) sp.set('to', n.to.trim());
  }
  for (const k of ['eventId', 'reason', 'errorClass'] as const) if (n[k]) sp.set(k, n[k]);
  return sp;
}

/** localTime reads a datetime-local value ("2026-12-01T09:30") as a time in the browser's zone; undefined if not one. */
export function localTime(v: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v.trim())) return undefined;
  const d = new Date(v.trim()); // without a zone, ECMAScript reads a date-time as local time
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export type FilterErrors = Partial<Record<'from' | 'to' | 'reason', string>>;

/** MAX_REASON_BYTES is the longest reason filter the API takes. */
export const MAX_REASON_BYTES = 256;

/** checkFilters checks the filters as the API would before they are applied; an empty result lets them be. */
export function checkFilters(f: DeadLetterFilters): FilterErrors {
  const e: FilterErrors = {};
  if (f.window === 'custom') {
    const from = f.from.trim() ? localTime(f.from) : undefined;
    const to = f.to.trim() ? localTime(f.to) : undefined;
    if (f.from.trim() && !from) e.from = 'Give a date and time.';
    if (f.to.trim() && !to) e.to = 'Give a date and time.';
    if (from && to && from.getTime() > to.getTime()) e.to = 'To is before from.';
  }
  if (new TextEncoder().encode(f.reason.trim()).length > MAX_REASON_BYTES) e.reason = `At most ${MAX_REASON_BYTES} bytes.`;
  return e;
}

/**
 * filterOf is the API's filter of the filters at the time now (a window "last hour" ends now): what the list
 * asks for, and what "redrive all matching" sends. Empty fields are left out; {} selects every dead letter.
 */
export function filterOf(f: DeadLetterFilters, now: Date): DeadLetterFilter {
  const n = normalized(f);
  const out: DeadLetterFilter = {};
  if (n.bus) out.bus = n.bus;
  if (n.rule) out.rule = n.rule;
  if (n.target) out.target = n.target;
  if (n.window === 'custom') {
    const from = localTime(n.from);
    const to = localTime(n.to);
    if (from) out.from = from.toISOString();
    if (to) out.to = to.toISOString();
  } else if (n.window !== 'any') {
    out.from = new Date(now.getTime() - windowMs[n.window]).toISOString();
  }
  if (n.eventId) out.eventId = n.eventId;
  if (n.reason) out.reason = n.reason;
  if (n.errorClass) out.errorClass = n.errorClass;
  return out;
}

/** listQuery is the query of GET /api/v1/dead-letters for a filter, with the page's token. */
export function listQuery(filter: DeadLetterFilter, nextToken?: string, limit = 100): Record<string, string | number | undefined> {
  return { ...filter, limit, nextToken };
}

/** filtersSet counts the filters that narrow the list (the time window included), for the page's summary. */
export function filtersSet(f: DeadLetterFilters): number {
  const n = normalized(f);
  let count = (['bus', 'rule', 'target', 'eventId', 'reason', 'errorClass'] as const).filter((k) => n[k] !== '').length;
  if (n.window !== 'any' && (n.window !== 'custom' || n.from.trim() || n.to.trim())) count++;
  return count;
}

/**
 * filterWords says in words which dead letters a filter selects, for the confirmation of "redrive all matching":
 * "every dead letter of the account", "the dead letters of target hook of rule created on bus orders whose reason
 * contains "503"".
 */
export function filterWords(filter: DeadLetterFilter, exact: (t: string) => string = (t) => t): string {
  const where = filter.target
    ? ` of target ${filter.target} of rule ${filter.rule} on bus ${filter.bus}`
    : filter.rule
      ? ` of rule ${filter.rule} on bus ${filter.bus}`
      : filter.bus
        ? ` of bus ${filter.bus}`
        : '';
  const more: string[] = [];
  if (filter.eventId) more.push(`of event ${filter.eventId}`);
  if (filter.errorClass) more.push(`of class ${filter.errorClass}`);
  if (filter.reason) more.push(`whose reason contains "${filter.reason}"`);
  if (filter.from && filter.to) more.push(`given up between ${exact(filter.from)} and ${exact(filter.to)}`);
  else if (filter.from) more.push(`given up since ${exact(filter.from)}`);
  else if (filter.to) more.push(`given up until ${exact(filter.to)}`);
  if (!where && more.length === 0) return 'every dead letter of the account';
  return `the dead letters${where}${more.length > 0 ? ' ' + more.join(', ') : ''}`;
}

/** countText says a number of dead letters: "1 dead letter", "3 dead letters". */
export const countText = (n: number) => `${n} dead letter${n === 1 ? '' : 's'}`;

/** discardSummary says what a discard did: "2 dead letters discarded", "1 discarded, 1 not". */
export function discardSummary(r: components['schemas']['DiscardResult']): string {
  const ok = r.deletedCount ?? 0;
  const failed = r.failedCount ?? 0;
  if (failed === 0) return `${countText(ok)} discarded.`;
  return `${countText(ok)} discarded, ${failed} not.`;
}

/**
 * redriveToast is the toast of a redrive the API took whole ("Sent 2 dead letters back to their targets"): what became
 * of them is for the results on the page, which follow them. A redrive with failures (or none sent) has no toast:
 * the results say so in red.
 */
export function redriveToast(r: components['schemas']['RedriveResult'] | undefined): string | undefined {
  const n = r?.redrivenCount ?? 0;
  if (!r || n === 0 || (r.failedCount ?? 0) > 0) return undefined;
  return `Sent ${countText(n)} back to ${n === 1 ? 'its target' : 'their targets'}`;
}

/** discardToast is the toast of a discard the API took whole ("Discarded 2 dead letters"); none when any failed. */
export function discardToast(r: components['schemas']['DiscardResult'] | undefined): string | undefined {
  const n = r?.deletedCount ?? 0;
  if (!r || n === 0 || (r.failedCount ?? 0) > 0) return undefined;
  return `Discarded ${countText(n)}`;
}

/*
 * Honest redrive results. A redriven event keeps its id; when its target gives it up again it comes back as a new
 * dead letter with a new id (docs/dead-letters.md "Redrive"). After a redrive the page looks for the events' dead
 * letters (?eventId=) for a few seconds: a new one (not there before the redrive) means the event failed again.
 */

/** REDRIVE_WATCH_MS is how long the page looks for new dead letters after a redrive; POLL_MS how often. */
export const REDRIVE_WATCH_MS = 10_000;
export const REDRIVE_POLL_MS = 1_000;
/** MAX_FOLLOWED is how many redriven events the page follows at most (each is one request a poll). */
export const MAX_FOLLOWED = 20;

/**
 * scanFrom is where a look for an event's dead letters starts: a minute before the time a dead letter of it was given
 * up (its stored time may be a little earlier than its time field); undefined when the time is unknown.
 */
export function scanFrom(time: string | undefined): string | undefined {
  const t = time ? Date.parse(time) : NaN;
  return Number.isNaN(t) ? undefined : new Date(t - 60_000).toISOString();
}

/** eventIdOf is the id of a dead letter's original event; undefined when it has none. */
export function eventIdOf(d: DeadLetter): string | undefined {
  const id = (d.event as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** Followed is a redriven dead letter the page follows: its event, its target and the event's dead letters before. */
export interface Followed {
  id: string;
  eventId: string;
  bus?: string;
  rule?: string;
  target?: string;
  /** time is when the dead letter was given up: the event's dead letters are looked for from then on. */
  time?: string;
  /** before are the ids of the event's dead letters just before the redrive (the redriven one among them). */
  before: string[];
}

/** followedOf is what the page follows of a dead letter it knows, with the ids its event had before; undefined without an event id. */
export function followedOf(d: DeadLetter, before: DeadLetter[]): Followed | undefined {
  const eventId = eventIdOf(d);
  if (!eventId || !d.id) return undefined;
  return { id: d.id, eventId, bus: d.bus, rule: d.rule, target: d.target, time: d.time, before: before.map((b) => b.id ?? '') };
}

/**
 * newDeadLetter is the dead letter the redriven event became: one of found (the event's dead letters now) that was
 * not there before the redrive, given up by the same target. Undefined when there is none (yet).
 */
export function newDeadLetter(f: Followed, found: DeadLetter[]): DeadLetter | undefined {
  return found.find(
    (d) => d.id !== undefined && d.id !== f.id && !f.before.includes(d.id) && eventIdOf(d) === f.eventId && d.bus === f.bus && d.rule === f.rule && d.target === f.target,
  );
}

/** RedriveOutcome is what the page knows of one dead letter of a redrive. */
export type RedriveOutcome =
  | { kind: 'not-redriven'; id: string; message: string }
  | { kind: 'watching'; id: string; eventId: string }
  | { kind: 'delivered'; id: string; eventId: string }
  | { kind: 'again'; id: string; eventId: string; deadLetter: DeadLetter }
  | { kind: 'not-followed'; id: string; why: string };

/**
 * outcomeOf is the outcome of a followed dead letter after elapsed ms of a watch of windowMs, from the event's dead
 * letters found now (undefined: not read yet or the read failed): again as soon as a new dead letter shows,
 * delivered once the window ended without one, else still watching.
 */
export function outcomeOf(f: Followed, found: DeadLetter[] | undefined, elapsedMs: number, windowMs = REDRIVE_WATCH_MS): RedriveOutcome {
  const again = found ? newDeadLetter(f, found) : undefined;
  if (again) return { kind: 'again', id: f.id, eventId: f.eventId, deadLetter: again };
  if (elapsedMs >= windowMs && found) return { kind: 'delivered', id: f.id, eventId: f.eventId };
  return { kind: 'watching', id: f.id, eventId: f.eventId };
}

/**
 * keepWatching decides whether to read the events' dead letters again: while one outcome is still watching and the
 * window has not ended (plus one last read after it, so that a watch ends on a read, not on a timer).
 */
export function keepWatching(outcomes: RedriveOutcome[], elapsedMs: number, windowMs = REDRIVE_WATCH_MS, pollMs = REDRIVE_POLL_MS): boolean {
  return outcomes.some((o) => o.kind === 'watching') && elapsedMs < windowMs + pollMs;
}

/**
 * firstOutcomes are the outcomes of a redrive's answer before any watch: a dead letter not redriven says why, one
 * the page follows is watching, the rest (no event known, or more than MAX_FOLLOWED) are not followed.
 */
export function firstOutcomes(r: components['schemas']['RedriveResult'], followed: Followed[]): RedriveOutcome[] {
  const byId = new Map(followed.map((f) => [f.id, f]));
  return (r.entries ?? []).map((e): RedriveOutcome => {
    const id = e.id ?? '';
    if (e.errorCode || e.errorMessage) return { kind: 'not-redriven', id, message: e.errorMessage || e.errorCode || '' };
    const f = byId.get(id);
    if (f) return { kind: 'watching', id, eventId: f.eventId };
    return { kind: 'not-followed', id, why: 'not followed here' };
  });
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * outcomeText says one outcome in words. "Dead letter 5 (event o-1): delivered (no new dead letter within 10 s)",
 * "Dead letter 5 (event o-1): dead-lettered again as dead letter 9 — connection refused".
 */
export function outcomeText(o: RedriveOutcome, windowMs = REDRIVE_WATCH_MS): string {
  switch (o.kind) {
    case 'not-redriven':
      return `Dead letter ${o.id} was not redriven: ${o.message.replace(/\.$/, '')}.`;
    case 'watching':
      return `Dead letter ${o.id} (event ${o.eventId}): redriven; watching for a new dead letter for ${seconds(windowMs)}…`;
    case 'delivered':
      return `Dead letter ${o.id} (event ${o.eventId}): delivered (no new dead letter within ${seconds(windowMs)}).`;
    case 'again':
      return `Dead letter ${o.id} (event ${o.eventId}): dead-lettered again as dead letter ${o.deadLetter.id} — ${o.deadLetter.reason ?? 'no reason given'}`;
    case 'not-followed':
      return `Dead letter ${o.id}: redriven (${o.why}: filter the list by its event ID to see whether it failed again).`;
  }
}

/** redriveSummary counts a redrive's outcomes: "1 redriven: 1 dead-lettered again", "2 redriven, 1 not: 2 delivered". */
export function redriveSummary(outcomes: RedriveOutcome[]): string {
  const n = (k: RedriveOutcome['kind']) => outcomes.filter((o) => o.kind === k).length;
  const failed = n('not-redriven');
  const redriven = outcomes.length - failed;
  const parts = [
    [n('again'), 'dead-lettered again'],
    [n('delivered'), 'delivered'],
    [n('watching'), 'being watched'],
    [n('not-followed'), 'not followed'],
  ]
    .filter(([c]) => (c as number) > 0)
    .map(([c, w]) => `${c} ${w}`);
  const head = `${redriven} redriven${failed > 0 ? `, ${failed} not` : ''}`;
  return parts.length > 0 ? `${head}: ${parts.join(', ')}.` : `${head}.`;
}

/**
 * watchRedrive follows redriven dead letters: every pollMs it reads each watched event's dead letters (load) and
 * reports the outcomes (onUpdate) until keepWatching says stop, then answers them. A failed read leaves the event
 * watching until the next. stopped ends the watch early (the page was left). Time and sleep are passed in (tests).
 */
export async function watchRedrive(
  first: RedriveOutcome[],
  followed: Followed[],
  load: (f: Followed) => Promise<DeadLetter[]>,
  onUpdate: (o: RedriveOutcome[]) => void,
  opts: { now?: () => number; sleep?: (ms: number) => Promise<void>; stopped?: () => boolean; windowMs?: number; pollMs?: number } = {},
): Promise<RedriveOutcome[]> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const windowMs = opts.windowMs ?? REDRIVE_WATCH_MS;
  const pollMs = opts.pollMs ?? REDRIVE_POLL_MS;
  const byId = new Map(followed.map((f) => [f.id, f]));
  const start = now();
  let outcomes = first;
  while (keepWatching(outcomes, now() - start, windowMs, pollMs) && !opts.stopped?.()) {
    await sleep(pollMs);
    const elapsed = now() - start;
    outcomes = await Promise.all(
      outcomes.map(async (o) => {
        const f = byId.get(o.id);
        if (o.kind !== 'watching' || !f) return o;
        const found = await load(f).catch(() => undefined);
        return outcomeOf(f, found, elapsed, windowMs);
      }),
    );
    if (opts.stopped?.()) return outcomes;
    onUpdate(outcomes);
  }
  if (opts.stopped?.() || !outcomes.some((o) => o.kind === 'watching')) return outcomes;
  // The window ended on failed reads: what is not known is not claimed.
  outcomes = outcomes.map((o): RedriveOutcome => (o.kind === 'watching' ? { kind: 'not-followed', id: o.id, why: 'its dead letters could not be read' } : o));
  onUpdate(outcomes);
  return outcomes;
}

/**
 * presence says whether dead letter id still exists among its event's dead letters (found), and which other dead
 * letters the event has (one given up after a redrive of it, say): the detail page's check that it is not stale.
 */
export function presence(id: string, found: DeadLetter[]): { current?: DeadLetter; others: DeadLetter[] } {
  return { current: found.find((d) => d.id === id), others: found.filter((d) => d.id !== id) };
}

/** listAll reads every page of a filtered list (following nextToken, at most maxPages pages). */
export async function listAll(load: (nextToken: string | undefined) => Promise<DeadLetterList>, maxPages = 20): Promise<DeadLetter[]> {
  const out: DeadLetter[] = [];
  let token: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await load(token);
    out.push(...(page.deadLetters ?? []));
    if (!page.nextToken) break;
    token = page.nextToken;
  }
  return out;
}
