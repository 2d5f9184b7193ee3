/**
 * The pure parts of the archives and replays pages (docs/archives.md): an archive's form values ↔ the API, the
 * start-replay form's validation and request body, and what the pages show of a replay (its state, progress and
 * counts). No React here; ArchivesPage.tsx, ReplaysPage.tsx, ReplayPage.tsx and ReplayForm.tsx render it.
 */
import type { components } from '../api/schema';
import { checkPattern, type PatternProblem } from '../builder/patternCheck';
import { durationText } from '../format';
import { localTime } from './deadLetters';

type S = components['schemas'];
export type Archive = S['Archive'];
export type ArchivePatch = S['ArchivePatch'];
export type Replay = S['Replay'];
export type ReplayDestination = S['ReplayDestination'];

/** FormErrors are the messages shown under the fields, by field name; none when the form may be sent. */
export type FormErrors = Record<string, string>;

// The control plane's own limits (domain/names.go, domain/archive, domain/replay), checked here so that the
// user hears of them under the field rather than in a 400 after pressing the button.
const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_DESCRIPTION_BYTES = 512;
export const MAX_RETENTION_DAYS = 36_500;
export const DEFAULT_RATE = 1000;
export const MAX_RATE = 100_000;

function checkNameAndDescription(name: string, description: string, e: FormErrors, checkName: boolean) {
  if (checkName) {
    if (name.trim() === '') e.name = 'A name is required.';
    else if (!NAME.test(name.trim())) e.name = 'Letters, digits, "_" and "-" only (at most 64).';
  }
  if (new TextEncoder().encode(description.trim()).length > MAX_DESCRIPTION_BYTES) e.description = `At most ${MAX_DESCRIPTION_BYTES} bytes.`;
}

/** countText writes a count with thousands separators ("1,204"); the console speaks English. */
export const countText = (n: number | undefined) => (n ?? 0).toLocaleString('en-US');

/**
 * readAll reads every page of a list that follows nextToken, at most maxPages (a select of archives or rules does
 * not need more, and a runaway token must not loop).
 */
export async function readAll<T>(load: (nextToken: string | undefined) => Promise<{ items: T[]; nextToken?: string }>, maxPages = 20): Promise<T[]> {
  const out: T[] = [];
  let token: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const d = await load(token);
    out.push(...d.items);
    if (!d.nextToken) break;
    token = d.nextToken;
  }
  return out;
}

/**
 * inBatches maps items with f, size of them at a time: the archives of every bus are read a few buses at a time,
 * so that an account with many buses does not send hundreds of requests at once. The results keep the items' order.
 */
export async function inBatches<T, R>(items: T[], size: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(f))));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Archives

export interface ArchiveForm {
  name: string;
  description: string;
  /** pattern is the event pattern's JSON text; empty archives every event of the bus. */
  pattern: string;
  /** retentionDays is a whole number of days as text; empty or 0 keeps events until the archive is deleted. */
  retentionDays: string;
}

/** canonical is a pattern's JSON text on one line, keys as written; "" for none; text that is not JSON as it is. */
function canonical(text: string): string {
  if (text.trim() === '') return '';
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.trim();
  }
}

/** patternJson is an archive's pattern as the API answers it (an object, or a string holding one), indented; "" for none. */
function patternJson(p: unknown): string {
  if (p === undefined || p === null) return '';
  if (typeof p !== 'string') return JSON.stringify(p, null, 2);
  try {
    return JSON.stringify(JSON.parse(p), null, 2);
  } catch {
    return p;
  }
}

/** archiveToForm is the form of an archive to edit, or of a new one (every event, kept until deleted). */
export function archiveToForm(a?: Archive): ArchiveForm {
  return {
    name: a?.name ?? '',
    description: a?.description ?? '',
    pattern: patternJson(a?.eventPattern),
    retentionDays: a?.retentionDays ? String(a.retentionDays) : '0',
  };
}

/** archivePatternProblems are the problems of the form's pattern, at their places; none when it is empty. */
export function archivePatternProblems(f: ArchiveForm): PatternProblem[] {
  return f.pattern.trim() === '' ? [] : checkPattern(f.pattern);
}

/** validateArchive checks the form as the API would; the pattern's own problems are archivePatternProblems. */
export function validateArchive(f: ArchiveForm, creating: boolean): FormErrors {
  const e: FormErrors = {};
  checkNameAndDescription(f.name, f.description, e, creating);
  if (archivePatternProblems(f).length > 0) e.pattern = 'Fix the event pattern, or leave it empty to archive every event.';
  const r = f.retentionDays.trim();
  if (r !== '' && (!/^[0-9]+$/.test(r) || Number(r) > MAX_RETENTION_DAYS)) e.retentionDays = `A whole number of days, 0 to ${countText(MAX_RETENTION_DAYS)}.`;
  return e;
}

// The generated schema types an event pattern as an empty record (swaggertype "object"): any JSON object is one.
type Pattern = NonNullable<Archive['eventPattern']>;
const parsedPattern = (f: ArchiveForm): Pattern | undefined => (f.pattern.trim() === '' ? undefined : (JSON.parse(f.pattern) as Pattern));
const retentionOf = (f: ArchiveForm) => (f.retentionDays.trim() === '' ? 0 : Number(f.retentionDays.trim()));

/** archiveCreateBody is the body of POST /buses/{bus}/archives; call it on a form validateArchive accepts. */
export function archiveCreateBody(f: ArchiveForm): Archive {
  const body: Archive = { name: f.name.trim(), retentionDays: retentionOf(f) };
  if (f.description.trim() !== '') body.description = f.description.trim();
  const p = parsedPattern(f);
  if (p) body.eventPattern = p;
  return body;
}

/**
 * archivePatchBody is the body of PATCH /buses/{bus}/archives/{archive}: the fields that differ from the archive
 * as it was read, the others left out (kept). A pattern emptied is sent as null: every event from then on. The
 * pattern is compared as JSON, so reformatting it changes nothing.
 */
export function archivePatchBody(f: ArchiveForm, before: Archive): ArchivePatch {
  const patch: ArchivePatch = {};
  if (f.description.trim() !== (before.description ?? '')) patch.description = f.description.trim();
  if (canonical(f.pattern) !== canonical(patternJson(before.eventPattern))) {
    // null is what the API takes for "no pattern"; the generated type does not say so.
    patch.eventPattern = (parsedPattern(f) ?? null) as Pattern;
  }
  if (retentionOf(f) !== (before.retentionDays ?? 0)) patch.retentionDays = retentionOf(f);
  return patch;
}

/** retentionDaysText says how long an archive keeps its events: "Until deleted", "1 day", "30 days". */
export function retentionDaysText(days: number | undefined): string {
  if (!days) return 'Until deleted';
  return `${countText(days)} ${days === 1 ? 'day' : 'days'}`;
}

/** patternSummary is an archive's pattern on one line, at most max characters; "Every event" without one. */
export function patternSummary(p: unknown, max = 80): string {
  const line = canonical(patternJson(p));
  if (line === '') return 'Every event';
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

// ---------------------------------------------------------------------------------------------------------------
// Starting a replay

/** WindowPreset is the window of stored time replayed: the last hour or day up to when the form is sent, or custom. */
export type WindowPreset = 'hour' | 'day' | 'custom';

export const windowChoices: { value: WindowPreset; label: string }[] = [
  { value: 'hour', label: 'Last hour' },
  { value: 'day', label: 'Last day' },
  { value: 'custom', label: 'Custom' },
];

const presetMs: Record<Exclude<WindowPreset, 'custom'>, number> = { hour: 3_600_000, day: 86_400_000 };

/** DestinationKind is where the replayed events go on the archive's bus: every rule, some rules, or one target. */
export type DestinationKind = 'all' | 'rules' | 'target';

export const destinationChoices: { value: DestinationKind; label: string }[] = [
  { value: 'all', label: 'Every rule' },
  { value: 'rules', label: 'Chosen rules' },
  { value: 'target', label: 'One target' },
];

export interface ReplayForm {
  name: string;
  description: string;
  /** archive is the archive's name (unique in the account). */
  archive: string;
  window: WindowPreset;
  /** from and to are datetime-local values ("2026-12-01T10:00", the browser's zone), read when window is custom. */
  from: string;
  to: string;
  destination: DestinationKind;
  /** rules are read when destination is rules; rule and target when it is target. */
  rules: string[];
  rule: string;
  target: string;
  /** rate is events per second as text; empty: the server's default. */
  rate: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** localInputOf writes a time as a datetime-local value in the browser's zone, to the minute ("2026-12-01T09:30"). */
export function localInputOf(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * newReplayForm is the form as it opens: the archive given (from an archive's Replay button) or none, the last hour,
 * every rule. The custom window starts as the last hour too, to the minute, so that picking Custom shows times to
 * edit rather than empty fields.
 */
export function newReplayForm(now: Date, archive = ''): ReplayForm {
  return {
    name: '',
    description: '',
    archive,
    window: 'hour',
    from: localInputOf(new Date(now.getTime() - presetMs.hour)),
    to: localInputOf(now),
    destination: 'all',
    rules: [],
    rule: '',
    target: '',
    rate: '',
  };
}

/**
 * replayWindow is the window [start, end) the form asks for at the time now: a preset ends now; a custom one is
 * read in the browser's zone. Undefined when a custom time is not one.
 */
export function replayWindow(f: ReplayForm, now: Date): { start: Date; end: Date } | undefined {
  if (f.window !== 'custom') return { start: new Date(now.getTime() - presetMs[f.window]), end: now };
  const start = localTime(f.from);
  const end = localTime(f.to);
  return start && end ? { start, end } : undefined;
}

/**
 * validateReplay checks the form as the server would at the time now: a name, an archive, a window whose start is
 * before its end and whose end is neither in the future nor before the archive was created (archiveCreatedAt,
 * when known: the archive holds nothing older), the destination's names, a rate from 1 to MAX_RATE.
 */
export function validateReplay(f: ReplayForm, now: Date, archiveCreatedAt?: string): FormErrors {
  const e: FormErrors = {};
  checkNameAndDescription(f.name, f.description, e, true);
  if (f.archive === '') e.archive = 'Choose the archive to replay.';
  if (f.window === 'custom') {
    const start = localTime(f.from);
    const end = localTime(f.to);
    if (!start) e.from = 'Give a date and time.';
    if (!end) e.to = 'Give a date and time.';
    else if (end.getTime() > now.getTime()) e.to = 'Not in the future: the events stored later are not archived yet.';
    else if (start && start.getTime() >= end.getTime()) e.to = 'After the start.';
    else if (archiveCreatedAt && end.getTime() <= Date.parse(archiveCreatedAt)) e.to = 'After the archive was created: it holds no event from before.';
  }
  if (f.destination === 'rules' && f.rules.length === 0) e.rules = 'Choose at least one rule, or replay to every rule.';
  if (f.destination === 'target') {
    if (f.rule === '') e.rule = 'Choose the rule of the target.';
    else if (f.target === '') e.target = 'Choose the target.';
  }
  const r = f.rate.trim();
  if (r !== '' && (!/^[0-9]+$/.test(r) || Number(r) < 1 || Number(r) > MAX_RATE)) e.rate = `A whole number of events per second, 1 to ${countText(MAX_RATE)}.`;
  return e;
}

/**
 * replayBody is the body of POST /replays at the time now; call it on a form validateReplay accepted at the same
 * time. Every rule is said by leaving the destination out; an empty description and rate are left out too.
 */
export function replayBody(f: ReplayForm, now: Date): Replay {
  const w = replayWindow(f, now);
  if (!w) throw new Error('replayBody: the window is not valid');
  const body: Replay = { name: f.name.trim(), archive: f.archive, eventStartTime: w.start.toISOString(), eventEndTime: w.end.toISOString() };
  if (f.description.trim() !== '') body.description = f.description.trim();
  if (f.destination === 'rules') body.destination = { rules: [...f.rules] };
  if (f.destination === 'target') body.destination = { target: { rule: f.rule, target: f.target } };
  if (f.rate.trim() !== '') body.rate = Number(f.rate.trim());
  return body;
}

// ---------------------------------------------------------------------------------------------------------------
// A replay's state and progress

export type ReplayState = NonNullable<Replay['state']>;

// Filled badges of these colours pass WCAG AA in both schemes (the health badges' colours, health.test.ts); the
// badge writes the state, so the colour is never the only sign.
const stateColors: Record<ReplayState, string> = {
  STARTING: 'blue',
  RUNNING: 'blue',
  CANCELLING: 'yellow',
  COMPLETED: 'green',
  CANCELLED: 'gray',
  FAILED: 'red',
};

/** stateColor is the badge colour of a replay's state; gray for one this console does not know. */
export function stateColor(s: string | undefined): string {
  return stateColors[s as ReplayState] ?? 'gray';
}

/** isTerminal says whether a replay ended: COMPLETED, CANCELLED or FAILED. Its page stops refreshing then. */
export function isTerminal(s: string | undefined): boolean {
  return s === 'COMPLETED' || s === 'CANCELLED' || s === 'FAILED';
}

/** canCancel says whether a replay may be cancelled: only while STARTING or RUNNING (CANCELLING is under way). */
export function canCancel(s: string | undefined): boolean {
  return s === 'STARTING' || s === 'RUNNING';
}

/** anyLive says whether some replay has not ended: the list refreshes while one has not. */
export function anyLive(replays: Replay[] | undefined): boolean {
  return (replays ?? []).some((r) => !isTerminal(r.state));
}

/**
 * progressFraction is how far through its window a replay is, 0 to 1: where the time the bus stored its last
 * event replayed (eventLastReplayedTime) falls in [eventStartTime, eventEndTime). A COMPLETED replay is 1 (its
 * window may end with a span that held no event). Undefined while it is not known: nothing replayed yet, or a
 * window that cannot be read.
 */
export function progressFraction(r: Replay): number | undefined {
  if (r.state === 'COMPLETED') return 1;
  const start = Date.parse(r.eventStartTime ?? '');
  const end = Date.parse(r.eventEndTime ?? '');
  const last = Date.parse(r.eventLastReplayedTime ?? '');
  if (Number.isNaN(start) || Number.isNaN(end) || Number.isNaN(last) || end <= start) return undefined;
  return Math.min(1, Math.max(0, (last - start) / (end - start)));
}

/** percentOf is a fraction as a whole percentage, never 100 before it is whole (99.6% is not done). */
export function percentOf(fraction: number): number {
  const p = Math.round(fraction * 100);
  return fraction < 1 && p === 100 ? 99 : p;
}

/** percentText writes a fraction as a whole percentage ("42%"); "—" when unknown. */
export function percentText(fraction: number | undefined): string {
  return fraction === undefined ? '—' : `${percentOf(fraction)}%`;
}

/** replayedText says a replay's counts: "1,204 events replayed (3 already stored)", "1 event replayed". */
export function replayedText(r: Replay): string {
  const n = r.eventsReplayed ?? 0;
  const text = `${countText(n)} ${n === 1 ? 'event' : 'events'} replayed`;
  return r.duplicates ? `${text} (${countText(r.duplicates)} already stored)` : text;
}

const names = (xs: string[]) => (xs.length === 1 ? xs[0] : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`);

/** destinationText says where a replay puts its events: "Every rule of orders", "Rules a and b", "Target t of rule r". */
export function destinationText(d: ReplayDestination | undefined): string {
  const bus = d?.bus ? ` of ${d.bus}` : '';
  if (d?.target) return `Target ${d.target.target ?? ''} of rule ${d.target.rule ?? ''}${bus}`;
  if (d?.rules && d.rules.length > 0) return `${d.rules.length === 1 ? 'Rule' : 'Rules'} ${names(d.rules)}${bus}`;
  return `Every rule${bus}`;
}

/**
 * windowText says a replay's window with its length: "Dec 1, 2026, 10:00:00 to Dec 1, 2026, 11:00:00 (1 h)", each
 * time written by exact (format.ts exactTime on the page).
 */
export function windowText(r: Replay, exact: (t: string) => string): string {
  const start = r.eventStartTime ?? '';
  const end = r.eventEndTime ?? '';
  const ms = Date.parse(end) - Date.parse(start);
  return `${exact(start)} to ${exact(end)}${Number.isNaN(ms) ? '' : ` (${durationText(ms)})`}`;
}
