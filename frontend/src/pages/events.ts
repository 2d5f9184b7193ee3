import type { components } from '../api/schema';
import { checkPattern, type PatternProblem } from '../builder/patternCheck';
import { durationText } from '../format';
import { isTerminal } from './replays';
import { customWindowErrors, windowBounds } from './timeWindow';

/*
 * The events pages (docs/events.md): the search of a bus's events, whose filters are kept in the page's address and
 * turned into the query of GET /api/v1/buses/{bus}/events, and the trace of one event, turned from what
 * GET /api/v1/buses/{bus}/events/{id}/trace answers into what the page shows (rules matched and why the others did
 * not, each target's attempts and final state, the dead letters), and the replay of it. Pure: no React here; `now`
 * is passed in.
 */

type Schemas = components['schemas'];
type StoredEvent = Schemas['StoredEvent'];
type EventTrace = Schemas['EventTrace'];
type BusLogRecord = Schemas['BusLogRecord'];
type DeadLetter = Schemas['DeadLetter'];
type RuleVerdict = Schemas['RuleVerdict'];
type Archive = Schemas['Archive'];
type Replay = Schemas['Replay'];
export type PatternExplanation = Schemas['PatternExplanation'];
export type LogLevel = NonNullable<Schemas['LogConfig']['level']>;

/** SCAN_PER_PAGE is how many events a page of the search reads at most (the API's limit). */
export const SCAN_PER_PAGE = 10_000;
/** PAGE_SIZE is how many events the page asks for at once. */
export const PAGE_SIZE = 50;

// ---------------------------------------------------------------------------------------------------------------
// Search filters

/** Window is when the events were stored: a span up to now, the whole retention, or from and to the user gives. */
export type Window = '15m' | '1h' | '24h' | 'any' | 'custom';

export const windowChoices: { value: Window; label: string }[] = [
  { value: '15m', label: 'Last 15 minutes' },
  { value: '1h', label: 'Last hour' },
  { value: '24h', label: 'Last day' },
  { value: 'any', label: 'Any time (the whole retention)' },
  { value: 'custom', label: 'From and to…' },
];

export interface EventFilters {
  window: Window;
  /** from and to are datetime-local values ("2026-12-01T10:00", the browser's zone), read when window is custom. */
  from: string;
  to: string;
  /** type, source, subject and id select events whose attribute equals them. */
  type: string;
  source: string;
  subject: string;
  id: string;
  /** pattern is an event pattern's JSON text, as a rule's. */
  pattern: string;
}

// The last hour by default: the whole retention is scanned from its oldest event, which on a busy bus takes many
// pages before it reaches what was just put.
export const defaultFilters: EventFilters = { window: '1h', from: '', to: '', type: '', source: '', subject: '', id: '', pattern: '' };

const textKeys = ['type', 'source', 'subject', 'id'] as const;
const isWindow = (v: string | null): v is Window => windowChoices.some((c) => c.value === v);

/** filtersFromSearch reads the filters from the page's address; what is missing or unknown is its default. */
export function filtersFromSearch(sp: URLSearchParams): EventFilters {
  const w = sp.get('window');
  return {
    window: isWindow(w) ? w : defaultFilters.window,
    from: sp.get('from') ?? '',
    to: sp.get('to') ?? '',
    type: sp.get('type') ?? '',
    source: sp.get('source') ?? '',
    subject: sp.get('subject') ?? '',
    id: sp.get('id') ?? '',
    pattern: sp.get('pattern') ?? '',
  };
}

/** filtersToSearch writes the filters into an address's query, leaving out defaults (filtersFromSearch's inverse). */
export function filtersToSearch(f: EventFilters): URLSearchParams {
  const sp = new URLSearchParams();
  if (f.window !== defaultFilters.window) sp.set('window', f.window);
  if (f.window === 'custom') {
    if (f.from.trim()) sp.set('from', f.from.trim());
    if (f.to.trim()) sp.set('to', f.to.trim());
  }
  for (const k of textKeys) if (f[k].trim()) sp.set(k, f[k].trim());
  if (f.pattern.trim()) sp.set('pattern', f.pattern.trim());
  return sp;
}

export interface FilterErrors {
  from?: string;
  to?: string;
  /** pattern lists the pattern's problems, each at its place (patternCheck.ts). */
  pattern?: PatternProblem[];
}

/** checkFilters checks the filters as the API would before they are applied; an empty result lets them be. */
export function checkFilters(f: EventFilters): FilterErrors {
  const e: FilterErrors = {};
  if (f.window === 'custom') Object.assign(e, customWindowErrors(f.from, f.to));
  if (f.pattern.trim()) {
    const problems = checkPattern(f.pattern);
    if (problems.length > 0) e.pattern = problems;
  }
  return e;
}

/** hasErrors reports whether checkFilters found anything. */
export const hasErrors = (e: FilterErrors) => Object.values(e).some((v) => v !== undefined);

/** compactPattern writes a pattern's JSON on one line, the shortest query; text that is not JSON is kept. */
function compactPattern(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.trim();
  }
}

/**
 * searchQuery is the query of GET /api/v1/buses/{bus}/events for the filters at the time now (a window "last hour"
 * ends now), with the token of the page to read; empty values are left out by the API client.
 */
export function searchQuery(f: EventFilters, now: Date, nextToken?: string, limit = PAGE_SIZE): Record<string, string | number | undefined> {
  const { from, to } = windowBounds(f.window, f.from, f.to, now);
  const out: Record<string, string | number | undefined> = { from, to };
  for (const k of textKeys) out[k] = f[k].trim() || undefined;
  out.pattern = f.pattern.trim() ? compactPattern(f.pattern) : undefined;
  out.limit = limit;
  out.nextToken = nextToken;
  return out;
}

/** filtersSet counts the filters that narrow the search besides the time window, for the page's summary. */
export function filtersSet(f: EventFilters): number {
  return [...textKeys, 'pattern' as const].filter((k) => f[k].trim() !== '').length;
}

/**
 * emptyText says why a search found nothing: the filters, the time window, and that a page reads at most 10,000
 * events within the bus's retention (retention: "3 days", "" when not known).
 */
export function emptyText(f: EventFilters, retention: string): string {
  const what = filtersSet(f) > 0 ? 'No event of this bus matches these filters' : 'This bus stored no event';
  const when = f.window === 'any' ? '' : f.window === 'custom' ? ' in this time window' : ` in the ${windowChoices.find((c) => c.value === f.window)!.label.toLowerCase()}`;
  const kept = retention ? `the bus's retention (${retention})` : "the bus's retention";
  return `${what}${when}. The search reads the events the bus keeps, within ${kept}, at most ${SCAN_PER_PAGE.toLocaleString('en')} of them a page: widen the time window or loosen the filters.`;
}

// ---------------------------------------------------------------------------------------------------------------
// Events

export interface EventAttributes {
  id?: string;
  source?: string;
  type?: string;
  subject?: string;
  time?: string;
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * storedKey names a stored event among a bus's: its sequence, and its index among the events of one PutEvents call
 * stored together at that sequence.
 */
export function storedKey(s: { sequence?: number; index?: number }): string {
  return `${s.sequence ?? 0}.${s.index ?? 0}`;
}

/** storedPlace says where the bus stored an event: "sequence 42", "sequence 42, event 3 of its call". */
export function storedPlace(s: { sequence?: number; index?: number }): string {
  if (!s.sequence) return '';
  return s.index ? `sequence ${s.sequence}, event ${s.index + 1} of its call` : `sequence ${s.sequence}`;
}

/** attributesOf reads a CloudEvent's attributes that the pages show; those it lacks are undefined. */
export function attributesOf(event: unknown): EventAttributes {
  const e = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>;
  return { id: text(e.id), source: text(e.source), type: text(e.type), subject: text(e.subject), time: text(e.time) };
}

/** TRACE_LEAD_MS is how long before a stored event its trace starts to look for it: stored times are in ms. */
const TRACE_LEAD_MS = 1000;

/**
 * tracePath is the address of a stored event's trace page: /buses/{bus}/events/{id}?source=…&from=… (from a
 * second before it was stored, so that the API finds it at once even when the bus logged nothing); undefined for an
 * event without an id or a source.
 */
export function tracePath(bus: string, stored: StoredEvent): string | undefined {
  const { id, source } = attributesOf(stored.event);
  if (!id || !source) return undefined;
  return eventTracePath(bus, id, source, stored.storedAt);
}

/**
 * eventTracePath is the address of the trace of the event id of source (ids are unique per source); given when the
 * bus stored it, the trace starts looking TRACE_LEAD_MS before, which finds it at once even when the bus logged
 * nothing.
 */
export function eventTracePath(bus: string, id: string, source: string, storedAt?: string): string {
  const sp = new URLSearchParams({ source });
  const at = storedAt ? Date.parse(storedAt) : NaN;
  if (!Number.isNaN(at)) sp.set('from', new Date(at - TRACE_LEAD_MS).toISOString());
  return `/buses/${encodeURIComponent(bus)}/events/${encodeURIComponent(id)}?${sp.toString()}`;
}

/** shortText cuts a long name (an event ID in the breadcrumbs) to max characters, the cut said by "…". */
export function shortText(s: string, max = 24): string {
  const chars = [...s];
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : s;
}

// ---------------------------------------------------------------------------------------------------------------
// Pattern explanations

const MAX_ALTERNATIVES = 5;
const MAX_VALUE_CHARS = 60;

/** valueText writes a JSON value as the event or pattern holds it, cut after 60 characters. */
export function valueText(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > MAX_VALUE_CHARS ? s.slice(0, MAX_VALUE_CHARS - 1) + '…' : s;
}

const comparisons: Record<string, string> = { '>': '>', '>=': '≥', '<': '<', '<=': '≤', '=': '=' };

/** orList joins texts as a person says a choice: "a", "a or b", "a, b or c". */
function orList(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

/** textMatch says a prefix's or a suffix's argument: "o" or {"equals-ignore-case": "o"}. */
function textMatch(arg: unknown, words: string): string | undefined {
  if (typeof arg === 'string') return `a text ${words} ${valueText(arg)}`;
  const ic = (arg as Record<string, unknown> | null)?.['equals-ignore-case'];
  if (typeof ic === 'string') return `a text ${words} ${valueText(ic)} in any case`;
  return undefined;
}

/**
 * alternativeText says one alternative of a pattern's array in words: "order.created" → "order.created" (quoted),
 * {"numeric": [">", 100]} → "a number > 100", {"prefix": "ord"} → "a text starting with "ord"", {"exists": false}
 * → "no value". What it does not know is written as JSON.
 */
export function alternativeText(alt: unknown): string {
  if (typeof alt !== 'object' || alt === null || Array.isArray(alt)) return valueText(alt);
  const keys = Object.keys(alt);
  if (keys.length !== 1) return valueText(alt);
  const arg = (alt as Record<string, unknown>)[keys[0]];
  let out: string | undefined;
  switch (keys[0]) {
    case 'prefix':
      out = textMatch(arg, 'starting with');
      break;
    case 'suffix':
      out = textMatch(arg, 'ending with');
      break;
    case 'equals-ignore-case':
      out = typeof arg === 'string' ? `${valueText(arg)} in any case` : undefined;
      break;
    case 'wildcard':
      out = typeof arg === 'string' ? `a text like ${valueText(arg)}` : undefined;
      break;
    case 'cidr':
      out = typeof arg === 'string' ? `an IP address in ${arg}` : undefined;
      break;
    case 'exists':
      out = arg === true ? 'any value' : arg === false ? 'no value' : undefined;
      break;
    case 'numeric':
      out = numericText(arg);
      break;
    case 'anything-but':
      out = anythingButText(arg);
      break;
  }
  return out ?? valueText(alt);
}

function numericText(arg: unknown): string | undefined {
  if (!Array.isArray(arg) || arg.length === 0 || arg.length % 2 !== 0) return undefined;
  const parts: string[] = [];
  for (let i = 0; i < arg.length; i += 2) {
    const op = comparisons[String(arg[i])];
    if (!op) return undefined;
    parts.push(`${op} ${valueText(arg[i + 1])}`);
  }
  return `a number ${parts.join(' and ')}`;
}

function anythingButText(arg: unknown): string | undefined {
  if (Array.isArray(arg)) return arg.length === 1 ? `anything but ${valueText(arg[0])}` : `anything but ${arg.map(valueText).join(', ')}`;
  if (typeof arg !== 'object' || arg === null) return `anything but ${valueText(arg)}`;
  const [name, sub] = Object.entries(arg)[0] ?? [];
  if (!name) return undefined;
  // {"anything-but": {"prefix": ["a", "b"]}}: none of the texts.
  const subs = Array.isArray(sub) ? sub : [sub];
  return `anything but ${orList(subs.map((s) => alternativeText({ [name]: s })))}`;
}

/** expectedText says a pattern's array of alternatives: "a number > 100", ""a" or "b"", five and "or N more". */
export function expectedText(expected: unknown[] | undefined): string {
  const alts = (expected ?? []).map(alternativeText);
  if (alts.length === 0) return 'nothing';
  if (alts.length <= MAX_ALTERNATIVES) return orList(alts);
  return `${alts.slice(0, MAX_ALTERNATIVES).join(', ')} or one of ${alts.length - MAX_ALTERNATIVES} more`;
}

// The matcher's reasons (domain/pattern/explain.go) that "expected …, the event has …" says by itself.
const plainReasons = new Set(['no value matches', 'the event has no value at this path', 'the field exists; the pattern requires it to be absent', 'the field exists and no value matches']);
const orReason = /^no \$or branch matches; in the closest \((\d+) of (\d+)\): (.*)$/s;

/**
 * explanationText says in one line why an event fails a rule's pattern: "data.amount: expected a number > 100,
 * the event has 50". A reason the line does not say by itself follows it ("; the values that match are in array
 * elements …"); with $or it says which branch came closest.
 */
export function explanationText(x: PatternExplanation | null | undefined): string {
  if (!x) return 'No explanation given.';
  const has = x.actual === undefined ? 'the event has none' : `the event has ${valueText(x.actual)}`;
  let line = `${x.path || 'the event'}: expected ${expectedText(x.expected)}, ${has}`;
  let reason = x.reason ?? '';
  const or = orReason.exec(reason);
  if (or) reason = or[3];
  if (reason && !plainReasons.has(reason)) line += `; ${reason}`;
  if (or) line += ` (no $or branch matches: this is the closest, branch ${or[1]} of ${or[2]})`;
  return line;
}

// ---------------------------------------------------------------------------------------------------------------
// Verdicts (POST /api/v1/buses/{bus}/test-event, and a trace's rules)

export interface VerdictRow {
  rule: string;
  state: 'ENABLED' | 'DISABLED';
  match: boolean;
  /** why says why the rule does not take the event (or that a matching rule is disabled); "" for a plain match. */
  why: string;
}

/** verdictRow is one rule's verdict in words. */
export function verdictRow(v: RuleVerdict): VerdictRow {
  const state = v.state ?? 'ENABLED';
  const match = v.match === true;
  let why = '';
  if (!match) why = explanationText(v.explanation);
  else if (state === 'DISABLED') why = 'Its pattern matches, but the rule is disabled: it would receive nothing.';
  return { rule: v.rule ?? '', state, match, why };
}

/** verdictSummary counts a test's verdicts: "1 of 3 rules matches the event", "No rule of the bus matches it". */
export function verdictSummary(out: Schemas['TestBusEventOutput']): string {
  const rules = out.rules ?? [];
  if (rules.length === 0) return 'The bus has no rules: the event would go nowhere.';
  const n = rules.filter((r) => r.match).length;
  const disabled = rules.filter((r) => r.match && r.state === 'DISABLED').length;
  if (n === 0) return `None of the bus's ${rules.length} rule${rules.length === 1 ? '' : 's'} matches the event: it would go nowhere.`;
  const head = `${n} of ${rules.length} rule${rules.length === 1 ? '' : 's'} match${n === 1 ? 'es' : ''} the event`;
  return disabled > 0 ? `${head} (${disabled} of them disabled, which receive${disabled === 1 ? 's' : ''} nothing).` : `${head}.`;
}

// ---------------------------------------------------------------------------------------------------------------
// The trace

/** What the bus's log level records (docs/events.md "The bus log"), and what to raise it to. */
export function noLogText(level: LogLevel | undefined): string {
  switch (level) {
    case 'OFF':
      return "The bus's log is off, so nothing was recorded: set its log level to INFO to record every attempt of the events put from then on (TRACE also says why rules did not match).";
    case 'ERROR':
      return 'The bus logs failures only (level ERROR) and recorded none, so the target probably took the event at its first attempt: set the log level to INFO to record deliveries too.';
    case 'INFO':
    case 'TRACE':
      return 'Nothing was recorded: an attempt may still be under way, the log level may have been lower when the event was routed, or the records expired (the log keeps them 24 hours by default).';
    default:
      return "The bus's log level says what is recorded: INFO records every attempt.";
  }
}

export type Tone = 'green' | 'teal' | 'orange' | 'red' | 'gray' | 'blue' | 'yellow';

/** TraceStep is one record of a target's history: an attempt, or what became of the event after one. */
export interface TraceStep {
  /** key is the record's id, unique in the trace. */
  key: string;
  type: string;
  at?: string;
  /** title names the step: "Attempt 2", "Dead-lettered", "Redriven". */
  title: string;
  /** outcome is the badge: "Delivered", "Failed, retried", "Failed for good". */
  outcome: string;
  tone: Tone;
  /** detail is the HTTP status or error class, the latency and the message: "HTTP 503 · http-5xx · 3.1 ms". */
  detail: string;
  message?: string;
  /** answer is the start of the target's answer, when the bus logs with includeDetail FULL. */
  answer?: string;
  traceId?: string;
}

const stepKinds: Record<string, { title: (r: BusLogRecord) => string; outcome: string; tone: Tone }> = {
  INVOCATION_ATTEMPT_SUCCESS: { title: (r) => `Attempt ${r.attempt ?? '?'}`, outcome: 'Delivered', tone: 'green' },
  INVOCATION_ATTEMPT_RETRYABLE_FAILURE: { title: (r) => `Attempt ${r.attempt ?? '?'}`, outcome: 'Failed, will retry', tone: 'orange' },
  INVOCATION_ATTEMPT_PERMANENT_FAILURE: { title: (r) => `Attempt ${r.attempt ?? '?'}`, outcome: 'Failed for good', tone: 'red' },
  INVOCATION_DLQ: { title: () => 'Given up', outcome: 'Dead-lettered', tone: 'red' },
  INVOCATION_DROPPED: { title: () => 'Given up', outcome: 'Dropped', tone: 'red' },
  INVOCATION_FAILURE: { title: () => 'Given up', outcome: 'Task failed', tone: 'red' },
  EVENT_FILTERED: { title: () => 'Transform', outcome: 'Filtered out', tone: 'gray' },
  EVENT_REDRIVEN: { title: () => 'Redrive', outcome: 'Redriven', tone: 'blue' },
};

const FAILED_TYPES = new Set(['INVOCATION_ATTEMPT_RETRYABLE_FAILURE', 'INVOCATION_ATTEMPT_PERMANENT_FAILURE']);

/** isTargetRecord reports whether a log record is a step of a target (an attempt, a dead letter, a redrive…). */
const isTargetRecord = (r: BusLogRecord) => r.type !== undefined && r.type in stepKinds && !!r.target;

/** stepOf turns a target's log record into a step of its timeline. */
export function stepOf(r: BusLogRecord): TraceStep {
  const kind = stepKinds[r.type ?? ''];
  const detail: string[] = [];
  if (r.httpStatus) detail.push(`HTTP ${r.httpStatus}`);
  if (r.errorClass) detail.push(r.errorClass);
  if (r.latencyMs !== undefined && r.latencyMs > 0) detail.push(durationText(r.latencyMs));
  if (r.type === 'INVOCATION_DLQ' || r.type === 'INVOCATION_DROPPED' || r.type === 'INVOCATION_FAILURE') {
    if (r.attempt) detail.unshift(`after ${r.attempt} attempt${r.attempt === 1 ? '' : 's'}`);
  }
  return {
    key: r.id ?? `${r.type}-${r.time}`,
    type: r.type ?? '',
    at: r.time,
    title: kind ? kind.title(r) : (r.type ?? 'Record'),
    outcome: kind?.outcome ?? r.type ?? '',
    tone: kind?.tone ?? 'gray',
    detail: detail.join(' · '),
    message: r.message || undefined,
    answer: r.snippet || undefined,
    traceId: r.traceId || undefined,
  };
}

export type TargetState = 'delivered' | 'recovered' | 'dead-lettered' | 'dropped' | 'failed' | 'filtered' | 'pending' | 'unknown';

export const stateLabels: Record<TargetState, { label: string; tone: Tone }> = {
  delivered: { label: 'Delivered', tone: 'green' },
  recovered: { label: 'Failed, then delivered', tone: 'teal' },
  'dead-lettered': { label: 'Dead-lettered', tone: 'red' },
  dropped: { label: 'Dropped', tone: 'red' },
  failed: { label: 'Failed', tone: 'red' },
  filtered: { label: 'Filtered out', tone: 'gray' },
  pending: { label: 'Pending', tone: 'yellow' },
  unknown: { label: 'Unknown', tone: 'gray' },
};

const attempts = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;

/**
 * finalState says what became of the event at one target, from the target's log records (oldest first) and its
 * dead letters: the last record decides; without any record, a dead letter says it was dead-lettered, and nothing
 * says the state is unknown, with what the bus's log level (level, undefined when not known) records.
 */
export function finalState(records: BusLogRecord[], deadLetters: DeadLetter[], level: LogLevel | undefined): { state: TargetState; text: string } {
  const last = records[records.length - 1];
  if (!last) {
    const d = deadLetters[0];
    if (d) return { state: 'dead-lettered', text: `Dead-lettered after ${attempts(d.attempts ?? 0)} (dead letter ${d.id}); the bus logged no attempt.` };
    return { state: 'unknown', text: noLogText(level) };
  }
  const failedBefore = records.filter((r) => FAILED_TYPES.has(r.type ?? '')).length;
  const redriven = records.some((r) => r.type === 'EVENT_REDRIVEN');
  const dl = deadLetters.length > 0 ? ` (dead letter ${deadLetters.map((d) => d.id).join(', ')})` : '';
  switch (last.type) {
    case 'INVOCATION_ATTEMPT_SUCCESS':
      if (failedBefore === 0) return { state: 'delivered', text: last.attempt && last.attempt > 1 ? `Delivered at attempt ${last.attempt}.` : 'Delivered at the first attempt.' };
      return {
        state: 'recovered',
        text: `Delivered${redriven ? ' after a redrive,' : ''} at attempt ${last.attempt ?? '?'}, after ${failedBefore} failed attempt${failedBefore === 1 ? '' : 's'}.`,
      };
    case 'INVOCATION_DLQ':
      return { state: 'dead-lettered', text: `Given up after ${attempts(last.attempt ?? 0)} and dead-lettered${dl}.` };
    case 'INVOCATION_DROPPED':
      return { state: 'dropped', text: `Given up after ${attempts(last.attempt ?? 0)} without a dead letter: the event is lost.` };
    case 'INVOCATION_FAILURE':
      return { state: 'failed', text: `Not delivered after ${attempts(last.attempt ?? 0)}: the target's task stopped on it.` };
    case 'INVOCATION_ATTEMPT_PERMANENT_FAILURE':
      return { state: 'failed', text: `Attempt ${last.attempt ?? '?'} failed and no other will be made; what became of the event is not recorded yet.` };
    case 'EVENT_FILTERED':
      return { state: 'filtered', text: "The target's transform filtered the event out: it was not delivered, as configured." };
    case 'INVOCATION_ATTEMPT_RETRYABLE_FAILURE':
      return { state: 'pending', text: `Attempt ${last.attempt ?? '?'} failed; another is scheduled.` };
    case 'EVENT_REDRIVEN':
      return { state: 'pending', text: 'Redriven from its dead letter; no attempt recorded since.' };
  }
  return { state: 'unknown', text: noLogText(level) };
}

export interface TargetTrace {
  target: string;
  steps: TraceStep[];
  state: TargetState;
  stateText: string;
  deadLetters: DeadLetter[];
}

export interface MatchedRule {
  rule: string;
  state?: 'ENABLED' | 'DISABLED';
  /** note says what is odd about the rule: disabled, or deleted since the event was routed. */
  note?: string;
  /** gone is true for a rule the router matched that the bus no longer has. */
  gone: boolean;
  targets: TargetTrace[];
}

export interface NotMatchedRule {
  rule: string;
  state: 'ENABLED' | 'DISABLED';
  why: string;
}

export interface TraceModel {
  fromLog: boolean;
  /** verdictsNote says where the verdicts come from. */
  verdictsNote: string;
  /** routedAt is when the bus's router read the event (its EVENT_RECEIPT). */
  routedAt?: string;
  matched: MatchedRule[];
  notMatched: NotMatchedRule[];
  /** logNote says why there is no log and which level to raise it to; undefined when the bus logged the event. */
  logNote?: string;
  deadLetters: DeadLetter[];
}

/** sameTarget reports whether a dead letter was given up by target of rule. */
const sameTarget = (d: DeadLetter, rule: string, target: string) => d.rule === rule && d.target === target;

/**
 * traceModel turns an event's trace into what its page shows. targets are the current targets of the matched
 * rules (rule → names, from the API; a rule left out has only the targets its records and dead letters name);
 * level is the bus's log level now (undefined when not known), to say what the log would record.
 */
export function traceModel(trace: EventTrace, targets: Record<string, string[]>, level: LogLevel | undefined): TraceModel {
  const log = trace.log ?? [];
  const rules = trace.rules ?? [];
  const deadLetters = trace.deadLetters ?? [];
  const fromLog = trace.matchedFrom === 'log';
  const known = new Set(rules.map((r) => r.rule ?? ''));

  // The rules matched: the verdicts', then those the router matched or whose targets logged that the bus no
  // longer has (deleted since).
  const matchedNames = rules.filter((r) => r.match).map((r) => r.rule ?? '');
  for (const r of log) {
    if (r.rule && !known.has(r.rule) && !matchedNames.includes(r.rule) && (r.type === 'RULE_MATCH' || isTargetRecord(r))) matchedNames.push(r.rule);
  }
  const matched = matchedNames.map((name): MatchedRule => {
    const verdict = rules.find((r) => r.rule === name);
    const records = log.filter((r) => r.rule === name && isTargetRecord(r));
    const names = [...(targets[name] ?? [])];
    for (const t of [...records.map((r) => r.target ?? ''), ...deadLetters.filter((d) => d.rule === name).map((d) => d.target ?? '')]) {
      if (t && !names.includes(t)) names.push(t);
    }
    let note: string | undefined;
    if (!verdict) note = 'The bus no longer has this rule: it was deleted after the event was routed.';
    else if (verdict.state === 'DISABLED') note = fromLog ? 'The rule is disabled now; it was enabled when the event was routed.' : 'Its pattern matches, but the rule is disabled: it receives nothing.';
    return {
      rule: name,
      state: verdict?.state,
      note,
      gone: !verdict,
      targets: names.map((t) => {
        const mine = records.filter((r) => r.target === t);
        const dls = deadLetters.filter((d) => sameTarget(d, name, t));
        const { state, text } = finalState(mine, dls, level);
        // With no log at all, the trace's note says why once; each target only points to it.
        const stateText = state === 'unknown' && log.length === 0 ? 'No attempt recorded: the bus logged nothing of this event.' : text;
        return { target: t, steps: mine.map(stepOf), state, stateText, deadLetters: dls };
      }),
    };
  });

  // Why the other rules did not match: what the router said then (RULE_NO_MATCH, TRACE), else the explanation
  // against the current rule.
  const saidThen = new Map(log.filter((r) => r.type === 'RULE_NO_MATCH' && r.rule && r.explanation).map((r) => [r.rule!, r.explanation as PatternExplanation]));
  const notMatched = rules
    .filter((r) => !r.match)
    .map((r): NotMatchedRule => {
      const name = r.rule ?? '';
      const state = r.state ?? 'ENABLED';
      const x = saidThen.get(name) ?? r.explanation;
      let why: string;
      if (x) why = explanationText(x);
      else if (state === 'DISABLED') why = 'Its pattern matches the event, but the rule is disabled.';
      else if (fromLog) why = 'Its pattern matches the event now, but the router did not send the event to it: the rule was created, enabled or changed after the event was routed.';
      else why = 'No explanation given.';
      return { rule: name, state, why };
    });

  return {
    fromLog,
    verdictsNote: fromLog
      ? "The verdicts are what the bus's router did when it routed the event, from the bus log."
      : "The bus did not log this event's routing: the verdicts are recomputed against today's rules, which may differ from the rules the router had when the event was put.",
    routedAt: log.find((r) => r.type === 'EVENT_RECEIPT')?.time,
    matched,
    notMatched,
    logNote: log.length === 0 ? `The bus logged nothing of this event. ${noLogText(level)}` : undefined,
    deadLetters,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Replay

/** REPLAY_MARGIN_MS is how far before and after the event's stored time its replay's window reaches. */
export const REPLAY_MARGIN_MS = 1000;

export type ReplayChoice =
  | { kind: 'none'; text: string }
  | { kind: 'too-late'; text: string }
  | { kind: 'archives'; archives: string[] };

/**
 * replayChoice says whether an event can be replayed: by the archives of its bus that existed when it was stored
 * (an archive keeps the events from its creation on); storedAt is the event's stored time.
 */
export function replayChoice(bus: string, archives: Archive[], storedAt: string | undefined): ReplayChoice {
  if (archives.length === 0) return { kind: 'none', text: `Replaying needs an archive of the bus: bus ${bus} has none. Create one to replay the events put from then on.` };
  const at = storedAt ? Date.parse(storedAt) : NaN;
  const ok = archives.filter((a) => a.name && (Number.isNaN(at) || !a.createdAt || Date.parse(a.createdAt) <= at)).map((a) => a.name!);
  if (ok.length === 0) return { kind: 'too-late', text: `The archives of bus ${bus} were created after this event was stored: none holds it, so it cannot be replayed.` };
  return { kind: 'archives', archives: ok };
}

/** replayName names a replay of an event: "event-<id>-<time>", at most 64 characters of A-Z, a-z, 0-9, _ and -. */
export function replayName(eventId: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  const id = eventId.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64 - 'event--'.length - stamp.length);
  return id ? `event-${id}-${stamp}` : `event-${stamp}`;
}

/** MAX_DESCRIPTION_BYTES is the longest description the API takes. */
const MAX_DESCRIPTION_BYTES = 512;

/** cutBytes cuts s to at most max bytes of UTF-8, ending it with "…" when cut. */
export function cutBytes(s: string, max: number): string {
  const bytes = (t: string) => new TextEncoder().encode(t).length;
  if (bytes(s) <= max) return s;
  const chars = [...s];
  while (chars.length > 0 && bytes(chars.join('') + '…') > max) chars.pop();
  return chars.join('') + '…';
}

/**
 * replayBody is the replay (POST /api/v1/replays) of the events archive holds that the bus stored within a second
 * of storedAt, to every rule of the bus; the window ends now at the latest (the API refuses a future end).
 */
export function replayBody(archive: string, event: EventAttributes, storedAt: string, now: Date): Replay {
  const at = Date.parse(storedAt);
  const end = Math.min(at + REPLAY_MARGIN_MS, now.getTime());
  const description = cutBytes(`Replay of event ${event.id ?? ''} (source ${event.source ?? ''}) from its trace in the console`, MAX_DESCRIPTION_BYTES);
  return {
    name: replayName(event.id ?? '', now),
    description,
    archive,
    eventStartTime: new Date(at - REPLAY_MARGIN_MS).toISOString(),
    eventEndTime: new Date(end).toISOString(),
    destination: {},
  };
}


/** replayDone reports whether a replay reached a final state (nothing more to follow). */
export const replayDone = (r: Replay) => isTerminal(r.state);

/** replayText says how a replay goes: "Replay event-42-…: running, 1 event replayed so far." */
export function replayText(r: Replay): string {
  const n = r.eventsReplayed ?? 0;
  const count = `${n} event${n === 1 ? '' : 's'} replayed`;
  switch (r.state) {
    case 'COMPLETED':
      return `Replay ${r.name}: completed, ${count}${r.duplicates ? ` (${r.duplicates} already stored once, skipped)` : ''}.`;
    case 'CANCELLED':
      return `Replay ${r.name}: cancelled, ${count}.`;
    case 'FAILED':
      return `Replay ${r.name}: failed after ${count}${r.stateReason ? `: ${r.stateReason}` : ''}.`;
    default:
      return `Replay ${r.name}: ${(r.state ?? 'starting').toLowerCase()}, ${count} so far.`;
  }
}
