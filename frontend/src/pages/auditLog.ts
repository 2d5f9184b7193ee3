import type { Schemas } from '../api/client';
import { customWindowErrors, windowBounds } from './timeWindow';

/**
 * The audit log page's filters (docs/identity.md "Audit log"): kept in the page's address (so that a reload, the
 * browser's back and a return after signing in again keep them), turned into the query of GET /api/v1/audit-log.
 * Pure: no React here; `now` is passed in.
 */

/** Window is the time the entries fall in: a span up to now, any time, or from and to the user gives. */
export type Window = 'any' | '1h' | '24h' | '7d' | '30d' | 'custom';

export const windowChoices: { value: Window; label: string }[] = [
  { value: '1h', label: 'Last hour' },
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: 'any', label: 'Any time' },
  { value: 'custom', label: 'From and to…' },
];


export type Outcome = '' | 'success' | 'failure';

export const outcomeChoices: { value: Outcome; label: string }[] = [
  { value: '', label: 'Any outcome' },
  { value: 'success', label: 'Success' },
  { value: 'failure', label: 'Failure' },
];

export interface AuditFilters {
  window: Window;
  /** from and to are datetime-local values ("2026-12-01T10:00", the browser's zone), read when window is custom. */
  from: string;
  to: string;
  /** actor is an actor's id or name. */
  actor: string;
  /** operation and resource are exact, or a prefix ending in * ("rules.*", "buses/orders*"). */
  operation: string;
  resource: string;
  outcome: Outcome;
  /** allAccounts asks for every account's entries and the instance's own (instance administrators). */
  allAccounts: boolean;
}

export const defaultFilters: AuditFilters = { window: 'any', from: '', to: '', actor: '', operation: '', resource: '', outcome: '', allAccounts: false };

const isWindow = (v: string | null): v is Window => windowChoices.some((c) => c.value === v);

/** filtersFromSearch reads the filters from the page's address; what is missing or unknown is its default. */
export function filtersFromSearch(sp: URLSearchParams): AuditFilters {
  const outcome = sp.get('outcome');
  const window = sp.get('window');
  return {
    window: isWindow(window) ? window : defaultFilters.window,
    from: sp.get('from') ?? '',
    to: sp.get('to') ?? '',
    actor: sp.get('actor') ?? '',
    operation: sp.get('operation') ?? '',
    resource: sp.get('resource') ?? '',
    outcome: outcome === 'success' || outcome === 'failure' ? outcome : '',
    allAccounts: sp.get('allAccounts') === 'true',
  };
}

/** filtersToSearch writes the filters into an address's query, leaving out defaults (filtersFromSearch's inverse). */
export function filtersToSearch(f: AuditFilters): URLSearchParams {
  const sp = new URLSearchParams();
  if (f.window !== defaultFilters.window) sp.set('window', f.window);
  if (f.window === 'custom') {
    if (f.from.trim()) sp.set('from', f.from.trim());
    if (f.to.trim()) sp.set('to', f.to.trim());
  }
  for (const k of ['actor', 'operation', 'resource'] as const) if (f[k].trim()) sp.set(k, f[k].trim());
  if (f.outcome) sp.set('outcome', f.outcome);
  if (f.allAccounts) sp.set('allAccounts', 'true');
  return sp;
}

export type FilterErrors = Partial<Record<'from' | 'to' | 'operation' | 'resource', string>>;

/** checkFilters checks the filters before they are applied; an empty result lets them be. */
export function checkFilters(f: AuditFilters): FilterErrors {
  const e: FilterErrors = {};
  if (f.window === 'custom') Object.assign(e, customWindowErrors(f.from, f.to));
  for (const k of ['operation', 'resource'] as const) {
    const v = f[k].trim();
    if (v.slice(0, -1).includes('*')) e[k] = 'A * may only end the text, for a prefix: rules.*';
  }
  return e;
}

/**
 * auditQuery is the query of GET /api/v1/audit-log for the filters at the time now (a window "last hour" ends
 * now), with the token of the page to read; empty values are left out by the API client.
 */
export function auditQuery(f: AuditFilters, now: Date, nextToken?: string, limit = 50): Record<string, string | number | undefined> {
  const { from, to } = windowBounds(f.window, f.from, f.to, now);
  return {
    from,
    to,
    actor: f.actor.trim() || undefined,
    operation: f.operation.trim() || undefined,
    resource: f.resource.trim() || undefined,
    outcome: f.outcome || undefined,
    allAccounts: f.allAccounts ? 'true' : undefined,
    limit,
    nextToken,
  };
}

/** filtersSet counts the filters that narrow the log (the time window included), for the page's summary. */
export function filtersSet(f: AuditFilters): number {
  let n = 0;
  if (f.window !== 'any' && (f.window !== 'custom' || f.from.trim() || f.to.trim())) n++;
  for (const k of ['actor', 'operation', 'resource', 'outcome'] as const) if (f[k].trim()) n++;
  return n;
}

const actorKinds: Record<string, string> = {
  user: 'User',
  apiKey: 'API key',
  accessKey: 'Access key',
  anonymous: 'Anonymous',
  clusterToken: 'Cluster token',
};

/** actorText says who made an audited call: "User alice", "API key ci", "Anonymous". */
export function actorText(a: Schemas['AuditActor'] | undefined): string {
  const kind = actorKinds[a?.kind ?? ''] ?? a?.kind ?? 'Unknown';
  const name = a?.name || a?.id;
  return name ? `${kind} ${name}` : kind;
}

/** outcomeText says how an audited call ended: "Success (201)", "Failure (409 BusNotEmpty)". */
export function outcomeText(e: Schemas['AuditEntry']): string {
  const word = e.outcome === 'failure' ? 'Failure' : e.outcome === 'success' ? 'Success' : (e.outcome ?? 'Unknown');
  const detail = [e.status, e.errorCode].filter((x) => x !== undefined && x !== '' && x !== 0).join(' ');
  return detail ? `${word} (${detail})` : word;
}
