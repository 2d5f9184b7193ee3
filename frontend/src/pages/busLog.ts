import type { components } from '../api/schema';
import { durationText } from '../format';
import { customWindowErrors, windowBounds } from './timeWindow';

/*
 * The bus log page (docs/events.md "The bus log"): the bus's log settings (logConfig of PATCH /api/v1/buses/{bus}),
 * the filters of its records, kept in the page's address and turned into the query of GET /api/v1/buses/{bus}/log,
 * and each record said in one line. Pure: no React here; `now` is passed in.
 */

type Schemas = components['schemas'];
export type Bus = Schemas['Bus'];
export type BusLogRecord = Schemas['BusLogRecord'];
export type LogLevel = NonNullable<Schemas['LogConfig']['level']>;
export type LogDetail = NonNullable<Schemas['LogConfig']['includeDetail']>;

/** PAGE_SIZE is how many records a page asks for. */
export const PAGE_SIZE = 100;
/** SCAN_PER_PAGE is how many records a page of the log reads at most (the API's limit). */
export const SCAN_PER_PAGE = 10_000;

// ---------------------------------------------------------------------------------------------------------------
// Settings

/** levelChoices are the levels a bus may log at, each said in one line (domain/bus LogConfig). */
export const levelChoices: { value: LogLevel; description: string }[] = [
  { value: 'OFF', description: 'Nothing is recorded, and logging adds nothing to the path of an event.' },
  { value: 'ERROR', description: 'Failed attempts, dead letters, events given up and failed replays.' },
  { value: 'INFO', description: 'Also the events the router read, the rules they matched, attempts that succeeded, redrives and replays.' },
  { value: 'TRACE', description: 'Also the rules an event did not match, with why (the first 20 per event).' },
];

/** LogSettings are a bus's log config, its defaults filled in. */
export interface LogSettings {
  level: LogLevel;
  includeDetail: LogDetail;
}

/** logSettingsOf reads a bus's log config; absent (an older server) or partial, OFF and NONE, as the server takes it. */
export function logSettingsOf(bus: Bus | undefined): LogSettings {
  return { level: bus?.logConfig?.level ?? 'OFF', includeDetail: bus?.logConfig?.includeDetail ?? 'NONE' };
}

/** logPatch is the body of PATCH /api/v1/buses/{bus} that sets the log config (and changes nothing else). */
export function logPatch(s: LogSettings): Schemas['BusPatch'] {
  return { logConfig: { level: s.level, includeDetail: s.includeDetail } };
}

/** settingsToast says what a save did: "Log of orders set to INFO, with detail". */
export function settingsToast(bus: string, s: LogSettings): string {
  if (s.level === 'OFF') return `Log of ${bus} turned off`;
  return `Log of ${bus} set to ${s.level}${s.includeDetail === 'FULL' ? ', with detail' : ''}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Filters

/** Window is when the records were written: a span up to now, everything the log keeps, or from and to. */
export type Window = '15m' | '1h' | '24h' | 'any' | 'custom';

export const windowChoices: { value: Window; label: string }[] = [
  { value: '15m', label: 'Last 15 minutes' },
  { value: '1h', label: 'Last hour' },
  { value: '24h', label: 'Last 24 hours' },
  { value: 'any', label: 'Everything the log keeps' },
  { value: 'custom', label: 'From and to…' },
];

/** LevelFilter keeps the records of a level and those above it; '' keeps all (TRACE, the API's default). */
export type LevelFilter = '' | 'ERROR' | 'INFO';

export const levelFilterChoices: { value: LevelFilter; label: string }[] = [
  { value: '', label: 'Any level' },
  { value: 'ERROR', label: 'ERROR: failures only' },
  { value: 'INFO', label: 'INFO and ERROR: no rules not matched' },
];

/** RECORD_TYPES are the types of the log's records (stream/buslog.go), in the order of an event's way. */
export const RECORD_TYPES = [
  'EVENT_RECEIPT',
  'RULE_MATCH',
  'NO_STANDARD_RULES_MATCHED',
  'RULE_NO_MATCH',
  'RULE_NO_MATCH_OMITTED',
  'INVOCATION_ATTEMPT_SUCCESS',
  'INVOCATION_ATTEMPT_RETRYABLE_FAILURE',
  'INVOCATION_ATTEMPT_PERMANENT_FAILURE',
  'INVOCATION_DLQ',
  'INVOCATION_DROPPED',
  'INVOCATION_FAILURE',
  'EVENT_FILTERED',
  'EVENT_REDRIVEN',
  'REPLAY_STARTED',
  'REPLAY_COMPLETED',
  'REPLAY_CANCELLED',
  'REPLAY_FAILED',
] as const;

export interface LogFilters {
  window: Window;
  /** from and to are datetime-local values ("2026-12-01T10:00", the browser's zone), read when window is custom. */
  from: string;
  to: string;
  level: LevelFilter;
  /** type is a record type; any text the address holds is kept (a type newer than the console). */
  type: string;
  rule: string;
  target: string;
  eventSource: string;
  eventId: string;
}

export const defaultLogFilters: LogFilters = { window: '1h', from: '', to: '', level: '', type: '', rule: '', target: '', eventSource: '', eventId: '' };

const TEXT_FIELDS = ['type', 'rule', 'target', 'eventSource', 'eventId'] as const;
const isWindow = (v: string | null): v is Window => windowChoices.some((c) => c.value === v);

/** logFiltersFromSearch reads the filters from the page's address; what is missing or unknown is its default. */
export function logFiltersFromSearch(sp: URLSearchParams): LogFilters {
  const window = sp.get('window');
  const level = sp.get('level');
  const f: LogFilters = {
    ...defaultLogFilters,
    window: isWindow(window) ? window : defaultLogFilters.window,
    level: level === 'ERROR' || level === 'INFO' ? level : '',
  };
  if (f.window === 'custom') {
    f.from = sp.get('from') ?? '';
    f.to = sp.get('to') ?? '';
  }
  for (const k of TEXT_FIELDS) f[k] = sp.get(k) ?? '';
  return f;
}

/** logFiltersToSearch writes the filters into an address's query, trimmed, defaults left out (the inverse of logFiltersFromSearch). */
export function logFiltersToSearch(f: LogFilters): URLSearchParams {
  const sp = new URLSearchParams();
  if (f.window !== defaultLogFilters.window) sp.set('window', f.window);
  if (f.window === 'custom') {
    if (f.from.trim()) sp.set('from', f.from.trim());
    if (f.to.trim()) sp.set('to', f.to.trim());
  }
  if (f.level) sp.set('level', f.level);
  for (const k of TEXT_FIELDS) if (f[k].trim()) sp.set(k, f[k].trim());
  return sp;
}

export type LogFilterErrors = Partial<Record<'from' | 'to', string>>;

/** checkLogFilters checks the filters before they are applied; an empty result lets them be. */
export function checkLogFilters(f: LogFilters): LogFilterErrors {
  const e: LogFilterErrors = f.window === 'custom' ? customWindowErrors(f.from, f.to) : {};
  return e;
}

/**
 * logQuery is the query of GET /api/v1/buses/{bus}/log for the filters at the time now (a window "last hour" ends
 * now), with the token of the page to read; empty values are left out by the API client.
 */
export function logQuery(f: LogFilters, now: Date, nextToken?: string, limit = PAGE_SIZE): Record<string, string | number | undefined> {
  const { from, to } = windowBounds(f.window, f.from, f.to, now);
  const q: Record<string, string | number | undefined> = { from, to, level: f.level || undefined };
  for (const k of TEXT_FIELDS) q[k] = f[k].trim() || undefined;
  return { ...q, limit, nextToken };
}

/** logFiltersSet counts the filters that narrow the records beyond the time window, for the empty state. */
export function logFiltersSet(f: LogFilters): number {
  return (f.level ? 1 : 0) + TEXT_FIELDS.filter((k) => f[k].trim() !== '').length;
}

// ---------------------------------------------------------------------------------------------------------------
// Records

/** levelColor is the colour of a level's badge: failures stand out, the rest recede. */
export function levelColor(level: string | undefined): string {
  switch (level) {
    case 'ERROR':
      return 'red';
    case 'INFO':
      return 'blue';
    default:
      return 'gray';
  }
}

// The records the bus's router writes: their storedAt is the event's own (a target's is that of its rule's copy).
const ROUTER_TYPES = new Set(['EVENT_RECEIPT', 'RULE_MATCH', 'NO_STANDARD_RULES_MATCHED', 'RULE_NO_MATCH', 'RULE_NO_MATCH_OMITTED']);

/**
 * eventStoredAt is when the bus stored the record's event, for its trace to look from: known for the router's
 * records only (a target's record has the time of the rule's copy, and a redriven one's is later than the event).
 */
export function eventStoredAt(r: BusLogRecord): string | undefined {
  return ROUTER_TYPES.has(r.type ?? '') ? r.storedAt : undefined;
}

const MAX_JSON_CHARS = 80;

/** shortJSON writes a value as compact JSON, cut to MAX_JSON_CHARS with "…". */
function shortJSON(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > MAX_JSON_CHARS ? s.slice(0, MAX_JSON_CHARS - 1) + '…' : s;
}

/**
 * explanationText says why an event did not match a rule, from a RULE_NO_MATCH's explanation (a
 * PatternExplanation): "data.amount: no value matches (the event has 20; the rule wants [{"numeric":[">",100]}])".
 */
export function explanationText(x: unknown): string {
  if (typeof x !== 'object' || x === null) return '';
  const e = x as Schemas['PatternExplanation'];
  const values: string[] = [];
  if (e.actual !== undefined) values.push(`the event has ${shortJSON(e.actual)}`);
  if (e.expected !== undefined) values.push(`the rule wants ${shortJSON(e.expected)}`);
  const why = [e.path, e.reason].filter((s) => s).join(': ');
  return [why, values.length > 0 ? `(${values.join('; ')})` : ''].filter((s) => s).join(' ');
}

const targetOf = (r: BusLogRecord) => (r.target ? `target ${r.target}` : 'the target');
const attemptOf = (r: BusLogRecord) => (r.attempt ? `attempt ${r.attempt} to ${targetOf(r)}` : `an attempt to ${targetOf(r)}`);
const attemptsText = (n: number | undefined) => (n ? ` after ${n === 1 ? '1 attempt' : `${n} attempts`}` : '');
const withMessage = (text: string, r: BusLogRecord) => (r.message ? `${text}: ${r.message}` : text);

/** failureText says how an attempt failed: "HTTP 503 (http-5xx)", "connection refused (network)", "timeout". */
function failureText(r: BusLogRecord): string {
  if (r.httpStatus) return `HTTP ${r.httpStatus}${r.errorClass ? ` (${r.errorClass})` : ''}`;
  if (r.errorClass && r.message) return `${r.message} (${r.errorClass})`;
  return r.errorClass || r.message || 'failed';
}

/** latencyText says how long a target took: "2.4 ms", "1.5 s"; '' when unknown. */
function latencyText(ms: number | undefined): string {
  return ms ? ` in ${durationText(Math.round(ms * 10) / 10)}` : '';
}

/** summaryOf says in one line what a record says, by its type; sentence case (summary capitalises it). */
function summaryOf(r: BusLogRecord): string {
  switch (r.type) {
    case 'EVENT_RECEIPT':
      return `read by the router${r.sequence ? ` (sequence ${r.sequence})` : ''}`;
    case 'RULE_MATCH':
      return `matched rule ${r.rule ?? ''}`.trim();
    case 'NO_STANDARD_RULES_MATCHED':
      return 'matched no rule';
    case 'RULE_NO_MATCH': {
      const why = explanationText(r.explanation);
      return `did not match rule ${r.rule ?? ''}`.trim() + (why ? `: ${why}` : '');
    }
    case 'RULE_NO_MATCH_OMITTED':
      return `did not match ${r.omitted ? `${r.omitted} more ${r.omitted === 1 ? 'rule' : 'rules'}` : 'more rules'}, not listed`;
    case 'INVOCATION_ATTEMPT_SUCCESS':
      return `${attemptOf(r)} succeeded${r.httpStatus ? `: HTTP ${r.httpStatus}` : ''}${latencyText(r.latencyMs)}`;
    case 'INVOCATION_ATTEMPT_RETRYABLE_FAILURE':
      return `${attemptOf(r)}: ${failureText(r)}, retrying`;
    case 'INVOCATION_ATTEMPT_PERMANENT_FAILURE':
      return `${attemptOf(r)}: ${failureText(r)}, no more attempts`;
    case 'INVOCATION_DLQ':
      return withMessage(`${targetOf(r)} dead-lettered the event${attemptsText(r.attempt)}`, r);
    case 'INVOCATION_DROPPED':
      return withMessage(`${targetOf(r)} gave the event up${attemptsText(r.attempt)}, without a dead letter`, r);
    case 'INVOCATION_FAILURE':
      return withMessage(`${targetOf(r)} could not deliver the event, and its task failed`, r);
    case 'EVENT_FILTERED':
      return `the transform of ${targetOf(r)} filtered the event out`;
    case 'EVENT_REDRIVEN':
      return `a dead letter of the event was redriven to ${targetOf(r)}`;
    case 'REPLAY_STARTED':
      return withMessage(`replay ${r.replay ?? ''} started`, r);
    case 'REPLAY_COMPLETED':
      return withMessage(`replay ${r.replay ?? ''} completed`, r);
    case 'REPLAY_CANCELLED':
      return withMessage(`replay ${r.replay ?? ''} was cancelled`, r);
    case 'REPLAY_FAILED':
      return withMessage(`replay ${r.replay ?? ''} failed`, r);
    default:
      // A type newer than the console: its name in words, and its message.
      return withMessage((r.type ?? 'record').toLowerCase().replaceAll('_', ' '), r);
  }
}

/**
 * recordSummary says in one line what a record says: "Attempt 2 to target hook: HTTP 503 (http-5xx), retrying",
 * "Matched rule created", "Did not match rule big: data.amount: no value matches (…)".
 */
export function recordSummary(r: BusLogRecord): string {
  const s = summaryOf(r).replace(/\s+/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * emptyText says why there is no record to show: the bus logs nothing (level OFF, and how to turn it on), the
 * filters match none, or nothing happened in the time. level is undefined while the bus is not read yet.
 */
export function emptyText(level: LogLevel | undefined, filtersSet: number): string {
  if (level === 'OFF') {
    return 'Nothing is recorded: the log level of this bus is OFF. Choose ERROR, INFO or TRACE in the log settings above and save; what happens to its events is recorded from then on.';
  }
  if (filtersSet > 0) return 'No records match these filters in this time.';
  if (level === 'ERROR') return 'No records in this time: at level ERROR only failures are recorded, and none happened.';
  if (level === undefined) return 'No records in this time.';
  return 'No records in this time: put an event on the bus, and what happens to it shows here.';
}

/**
 * logTime writes when a record was written, to the second: "12:00:01" today (in the browser's zone, or timeZone),
 * "30 Nov 23:59:58" on another day; the text itself when it is not a time.
 */
export function logTime(t: string | undefined, now: Date, opts: { locale?: string; timeZone?: string } = {}): string {
  if (!t) return '';
  const at = Date.parse(t);
  if (Number.isNaN(at)) return t;
  const day = new Intl.DateTimeFormat(opts.locale, { day: 'numeric', month: 'short', timeZone: opts.timeZone });
  const time = new Intl.DateTimeFormat(opts.locale, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZone: opts.timeZone }).format(at);
  const ymd = new Intl.DateTimeFormat('en-CA', { timeZone: opts.timeZone }); // 2026-12-01: compares days
  return ymd.format(at) === ymd.format(now) ? time : `${day.format(at)} ${time}`;
}
