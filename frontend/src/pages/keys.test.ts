import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/problem';
import {
  accessKeyBody,
  apiKeyBody,
  busesText,
  checkKeyForm,
  emptyKeyForm,
  expiresAt,
  expiryChoices,
  expiryText,
  keyFormError,
  keySummary,
  localTime,
  type KeyForm,
} from './keys';

const now = new Date('2026-12-01T10:00:00Z');
const form = (f: Partial<KeyForm>): KeyForm => ({ ...emptyKeyForm, name: 'ci', role: 'publisher', ...f });

describe('expiresAt', () => {
  it.each([
    ['never', undefined],
    ['7d', '2026-12-08T10:00:00.000Z'],
    ['30d', '2026-12-31T10:00:00.000Z'],
    ['90d', '2027-03-01T10:00:00.000Z'],
    ['1y', '2027-12-01T10:00:00.000Z'],
  ] as const)('%s is %s', (expiry, want) => {
    expect(expiresAt(expiry, '', now)).toBe(want);
  });

  it('reads a custom time in the browser’s zone', () => {
    expect(expiresAt('custom', '2027-12-31T09:30', now)).toBe(new Date(2027, 11, 31, 9, 30).toISOString());
    expect(expiresAt('custom', '', now)).toBeUndefined();
  });

  it('offers every choice once, never first', () => {
    expect(expiryChoices[0].value).toBe('never');
    expect(new Set(expiryChoices.map((c) => c.value)).size).toBe(expiryChoices.length);
  });
});

describe('localTime', () => {
  it.each([['2027-12-31T09:30'], ['2027-12-31T09:30:15']])('reads %s', (v) => {
    expect(localTime(v)?.getFullYear()).toBe(2027);
  });
  it.each([[''], ['2027-12-31'], ['tomorrow'], ['2027-12-31T09:30Z'], ['2027-13-45T99:99']])('refuses %j', (v) => {
    expect(localTime(v)).toBeUndefined();
  });
});

describe('checkKeyForm', () => {
  it.each([
    ['a good form', form({}), 'apiKey', {}],
    ['no name', form({ name: ' ' }), 'apiKey', { name: 'Give the key a name.' }],
    ['a name with a space', form({ name: 'my key' }), 'apiKey', { name: 'A name is 1 to 64 characters of A-Z, a-z, 0-9, _ and -.' }],
    ['no role', form({ role: '' }), 'accessKey', { role: 'Choose a role.' }],
    ['no custom time', form({ expiry: 'custom' }), 'apiKey', { customExpiry: 'Give a date and time.' }],
    ['a past time', form({ expiry: 'custom', customExpiry: '2020-01-01T00:00' }), 'apiKey', { customExpiry: 'The time is past: a key must expire in the future.' }],
    ['too far', form({ expiry: 'custom', customExpiry: '2040-01-01T00:00' }), 'accessKey', { customExpiry: 'A key expires within 10 years.' }],
    ['buses of a viewer', form({ role: 'viewer', buses: ['orders'] }), 'apiKey', { buses: 'A viewer key cannot put events, so it cannot be limited to buses.' }],
    ['a bad bus', form({ buses: ['orders', 'a b'] }), 'apiKey', { buses: '“a b” is not a bus name.' }],
    ['buses of an access key are not looked at', form({ role: 'viewer', buses: ['orders'] }), 'accessKey', {}],
    ['an instance administrator’s editor key', form({ role: 'editor', instanceAdmin: true }), 'apiKey', { role: 'An instance administrator’s key has the role admin.' }],
  ] as const)('%s', (_, f, kind, want) => {
    expect(checkKeyForm(f, now, kind)).toEqual(want);
  });
});

describe('apiKeyBody', () => {
  it('sends the name, role, expiry and buses', () => {
    expect(apiKeyBody(form({ name: ' ci ', expiry: '7d', buses: ['orders', 'orders', ' billing '] }), now)).toEqual({
      name: 'ci',
      role: 'publisher',
      expiresAt: '2026-12-08T10:00:00.000Z',
      buses: ['orders', 'billing'],
    });
  });
  it('leaves out what is not given', () => {
    expect(apiKeyBody(form({ role: 'viewer', expiry: 'never' }), now)).toEqual({ name: 'ci', role: 'viewer' });
  });
  it('marks an instance administrator’s key', () => {
    expect(apiKeyBody(form({ role: 'admin', expiry: 'never', instanceAdmin: true }), now)).toEqual({ name: 'ci', role: 'admin', instanceAdmin: true });
  });
});

describe('accessKeyBody', () => {
  it('sends the name, role and expiry, never buses', () => {
    expect(accessKeyBody(form({ role: 'editor', expiry: '1y', buses: ['orders'] }), now)).toEqual({
      name: 'ci',
      role: 'editor',
      expiresAt: '2027-12-01T10:00:00.000Z',
    });
  });
});

describe('keyFormError', () => {
  it.each([
    ['a field', new ApiError(400, { status: 400, code: 'ValidationError', field: 'expiresAt', detail: 'expiresAt 2020-01-01T00:00:00Z is not in the future' }), { customExpiry: 'expiresAt 2020-01-01T00:00:00Z is not in the future.' }],
    ['buses', new ApiError(400, { status: 400, code: 'ValidationError', field: 'buses', detail: 'a key names at most 100 buses' }), { buses: 'A key names at most 100 buses.' }],
    ['two live keys', new ApiError(409, { status: 409, code: 'ApiKeyNameInUse', detail: 'two live keys are named ci' }), { name: 'Two live keys are named ci. Revoke one of the two live keys of this name first, or choose another name.' }],
    ['anything else', new ApiError(500, { status: 500 }), { form: 'The server failed.' }],
  ])('%s', (_, err, want) => {
    expect(keyFormError(err)).toEqual(want);
  });
});

describe('expiryText', () => {
  it.each([
    [undefined, 'Never'],
    ['2026-12-31T10:00:00Z', 'in 30 days'],
    ['2027-03-01T09:59:58Z', 'in 90 days'],
    ['2027-12-01T10:00:00Z', 'in 365 days'],
    ['2026-12-01T15:00:00Z', 'in 5 h'],
    ['2026-11-28T10:00:00Z', 'Expired 3 days ago'],
    ['not a time', 'not a time'],
  ])('%s: %s', (at, want) => {
    expect(expiryText(at, now)).toBe(want);
  });
});

describe('busesText', () => {
  it.each([
    [{ role: 'publisher', buses: ['orders', 'billing'] }, 'orders, billing'],
    [{ role: 'editor' }, 'Every bus'],
    [{ role: 'viewer' }, 'No events'],
  ])('%j: %s', (k, want) => {
    expect(busesText(k)).toBe(want);
  });
});

describe('keySummary', () => {
  const t = (s: string) => `<${s}>`;
  it.each([
    [{ name: 'ci', role: 'viewer' }, 'Key ci: role viewer, never expires.'],
    [{ name: 'ci', role: 'publisher', buses: ['orders'], expiresAt: '2027-01-01T00:00:00Z' }, 'Key ci: role publisher, bus orders, expires <2027-01-01T00:00:00Z>.'],
    [{ name: 'ci', role: 'editor', buses: ['a', 'b', 'c'] }, 'Key ci: role editor, buses a, b and c, never expires.'],
  ])('%j', (k, want) => {
    expect(keySummary(k, t)).toBe(want);
  });
});
