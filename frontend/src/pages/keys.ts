import type { Schemas } from '../api/client';
import { ApiError, errorText, problemText } from '../api/problem';
import { relativeTime } from '../format';
import { isRole, roleGrants, type Role } from './roles';

/**
 * The forms of API keys and access keys (docs/identity.md "API keys", "Access keys"): what the user picks (a name,
 * a role, an expiry and, for an API key, the buses it may put events on) turned into the API's body, checked
 * before it is sent as the server would check it. Pure: no React here; `now` is passed in.
 */

/** Expiry is how long a new key lives: a fixed choice, or a date and time the user gives. */
export type Expiry = 'never' | '7d' | '30d' | '90d' | '1y' | 'custom';

const DAY_MS = 86_400_000;
const lifetimes: Record<Exclude<Expiry, 'never' | 'custom'>, number> = { '7d': 7, '30d': 30, '90d': 90, '1y': 365 };

/** expiryChoices are the choices of the expiry picker, in its order. */
export const expiryChoices: { value: Expiry; label: string }[] = [
  { value: 'never', label: 'Never' },
  { value: '7d', label: 'In 7 days' },
  { value: '30d', label: 'In 30 days' },
  { value: '90d', label: 'In 90 days' },
  { value: '1y', label: 'In 1 year' },
  { value: 'custom', label: 'At a date and time…' },
];

/** The server refuses an expiry more than 10 years away (domain.MaxCredentialLifetime). */
export const maxLifetimeDays = 3650;

export interface KeyForm {
  name: string;
  role: Role | '';
  expiry: Expiry;
  /** customExpiry is the value of a datetime-local input ("2027-12-31T00:00"), read in the browser's zone. */
  customExpiry: string;
  /** buses restrict an API key to putting events on them (empty: every bus); access keys have none. */
  buses: string[];
  /** instanceAdmin makes an API key an instance administrator's (offered to instance administrators only). */
  instanceAdmin: boolean;
}

export const emptyKeyForm: KeyForm = { name: '', role: '', expiry: '90d', customExpiry: '', buses: [], instanceAdmin: false };

export type KeyFormErrors = Partial<Record<'name' | 'role' | 'customExpiry' | 'buses' | 'form', string>>;

const nameRe = /^[A-Za-z0-9_-]{1,64}$/;
const busRe = /^[A-Za-z0-9._/-]{1,256}$/;

/**
 * localTime reads a datetime-local value ("2027-12-31T09:30") as a time in the browser's zone; undefined when it is
 * not one.
 */
export function localTime(v: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v.trim())) return undefined;
  const d = new Date(v.trim()); // without a zone, ECMAScript reads a date-time as local time
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** expiresAt is the RFC 3339 time a key made now with this expiry ends; undefined for never (or a custom one unread). */
export function expiresAt(expiry: Expiry, customExpiry: string, now: Date): string | undefined {
  if (expiry === 'never') return undefined;
  if (expiry === 'custom') return localTime(customExpiry)?.toISOString();
  return new Date(now.getTime() + lifetimes[expiry] * DAY_MS).toISOString();
}

/**
 * busesAllowed reports whether a key of role may be restricted to some buses: the restriction is about putting
 * events, so the server refuses it for a role that cannot put events.
 */
export function busesAllowed(role: string): boolean {
  return roleGrants(role, 'events.put');
}

/** checkKeyForm checks a key's form before it is sent; an empty result lets it be sent. */
export function checkKeyForm(f: KeyForm, now: Date, kind: 'apiKey' | 'accessKey'): KeyFormErrors {
  const e: KeyFormErrors = {};
  if (f.name.trim() === '') e.name = 'Give the key a name.';
  else if (!nameRe.test(f.name.trim())) e.name = 'A name is 1 to 64 characters of A-Z, a-z, 0-9, _ and -.';
  if (!isRole(f.role)) e.role = 'Choose a role.';
  if (f.expiry === 'custom') {
    const at = localTime(f.customExpiry);
    if (!at) e.customExpiry = 'Give a date and time.';
    else if (at.getTime() <= now.getTime()) e.customExpiry = 'The time is past: a key must expire in the future.';
    else if (at.getTime() - now.getTime() > maxLifetimeDays * DAY_MS) e.customExpiry = 'A key expires within 10 years.';
  }
  if (kind === 'apiKey' && f.buses.length > 0) {
    const bad = f.buses.find((b) => !busRe.test(b) || b === '.' || b === '..');
    if (isRole(f.role) && !busesAllowed(f.role)) e.buses = `A ${f.role} key cannot put events, so it cannot be limited to buses.`;
    else if (bad !== undefined) e.buses = `“${bad}” is not a bus name.`;
    else if (f.buses.length > 100) e.buses = 'A key names at most 100 buses.';
  }
  if (kind === 'apiKey' && f.instanceAdmin && f.role !== 'admin') e.role = 'An instance administrator’s key has the role admin.';
  return e;
}

/** apiKeyBody is the body of POST /api/v1/api-keys for a checked form. */
export function apiKeyBody(f: KeyForm, now: Date): Schemas['ApiKey'] {
  const body: Schemas['ApiKey'] = { name: f.name.trim(), role: f.role as Role };
  const at = expiresAt(f.expiry, f.customExpiry, now);
  if (at) body.expiresAt = at;
  const buses = [...new Set(f.buses.map((b) => b.trim()).filter((b) => b !== ''))];
  if (buses.length > 0 && busesAllowed(f.role)) body.buses = buses;
  if (f.instanceAdmin) body.instanceAdmin = true;
  return body;
}

/** accessKeyBody is the body of POST /api/v1/access-keys for a checked form. */
export function accessKeyBody(f: KeyForm, now: Date): Schemas['AccessKey'] {
  const body: Schemas['AccessKey'] = { name: f.name.trim(), role: f.role as Role };
  const at = expiresAt(f.expiry, f.customExpiry, now);
  if (at) body.expiresAt = at;
  return body;
}

/** keyFormError places the server's refusal of a key on the field it names; the rest goes above the buttons. */
export function keyFormError(err: unknown): KeyFormErrors {
  if (err instanceof ApiError && err.status === 400) {
    const text = problemText({ ...err.problem, field: undefined }, 400);
    switch (err.problem.field) {
      case 'name':
        return { name: text };
      case 'role':
        return { role: text };
      case 'expiresAt':
        return { customExpiry: text };
      case 'buses':
        return { buses: text };
    }
  }
  if (err instanceof ApiError && err.status === 409) return { name: `${err.message} Revoke one of the two live keys of this name first, or choose another name.` };
  return { form: errorText(err) };
}

/**
 * expiryText says when a key expires: "Never", "in 5 h", "in 90 days" (in days from 2 days on, rounded, since keys
 * are made to last whole days), or "Expired 3 days ago".
 */
export function expiryText(expiresAt: string | undefined, now: Date): string {
  if (!expiresAt) return 'Never';
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at)) return expiresAt;
  if (at <= now.getTime()) return `Expired ${relativeTime(expiresAt, now)}`;
  const days = Math.round((at - now.getTime()) / DAY_MS);
  return days >= 2 ? `in ${days} days` : relativeTime(expiresAt, now);
}

/** busesText says which buses a key may put events on. */
export function busesText(k: { buses?: string[]; role?: string }): string {
  if (!busesAllowed(k.role ?? '')) return 'No events';
  return k.buses && k.buses.length > 0 ? k.buses.join(', ') : 'Every bus';
}

/**
 * keySummary says in a sentence what a key just created is: "Key ci: role publisher, buses orders and billing,
 * expires Dec 31, 2027, 00:00:00 UTC." timeText writes the expiry (exactTime in the page).
 */
export function keySummary(k: { name?: string; role?: string; buses?: string[]; expiresAt?: string }, timeText: (t: string) => string): string {
  const parts = [`role ${k.role ?? 'unknown'}`];
  if (k.buses && k.buses.length > 0) parts.push(`${k.buses.length === 1 ? 'bus' : 'buses'} ${listText(k.buses)}`);
  parts.push(k.expiresAt ? `expires ${timeText(k.expiresAt)}` : 'never expires');
  return `Key ${k.name ?? ''}: ${parts.join(', ')}.`;
}

/** listText joins words as a sentence does: "a", "a and b", "a, b and c". */
function listText(words: string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}
