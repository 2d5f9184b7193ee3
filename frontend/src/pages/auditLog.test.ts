import { describe, expect, it } from 'vitest';
import { actorText, auditQuery, checkFilters, defaultFilters, filtersFromSearch, filtersSet, filtersToSearch, outcomeText, windowChoices, type AuditFilters } from './auditLog';

const now = new Date('2026-12-01T10:00:00Z');
const filters = (f: Partial<AuditFilters>): AuditFilters => ({ ...defaultFilters, ...f });

describe('auditQuery', () => {
  it('asks for the first page of everything by default', () => {
    expect(auditQuery(defaultFilters, now)).toEqual({
      from: undefined,
      to: undefined,
      actor: undefined,
      operation: undefined,
      resource: undefined,
      outcome: undefined,
      allAccounts: undefined,
      limit: 50,
      nextToken: undefined,
    });
  });

  it.each([
    ['1h', '2026-12-01T09:00:00.000Z'],
    ['24h', '2026-11-30T10:00:00.000Z'],
    ['7d', '2026-11-24T10:00:00.000Z'],
    ['30d', '2026-11-01T10:00:00.000Z'],
  ] as const)('a window of %s starts at %s and has no end', (window, from) => {
    expect(auditQuery(filters({ window }), now)).toMatchObject({ from, to: undefined });
  });

  it('reads a custom window in the browser’s zone', () => {
    const q = auditQuery(filters({ window: 'custom', from: '2026-11-30T08:00', to: '2026-11-30T09:30' }), now);
    expect(q.from).toBe(new Date(2026, 10, 30, 8, 0).toISOString());
    expect(q.to).toBe(new Date(2026, 10, 30, 9, 30).toISOString());
  });

  it('ignores from and to unless the window is custom', () => {
    expect(auditQuery(filters({ window: 'any', from: '2026-11-30T08:00' }), now).from).toBeUndefined();
  });

  it('sends the filters given, trimmed, with the page’s token', () => {
    const f = filters({ actor: ' alice ', operation: 'rules.*', resource: 'buses/orders*', outcome: 'failure', allAccounts: true });
    expect(auditQuery(f, now, 'tok-2', 100)).toMatchObject({
      actor: 'alice',
      operation: 'rules.*',
      resource: 'buses/orders*',
      outcome: 'failure',
      allAccounts: 'true',
      limit: 100,
      nextToken: 'tok-2',
    });
  });
});

describe('filtersFromSearch and filtersToSearch', () => {
  it.each([
    ['the defaults', defaultFilters, ''],
    ['a window', filters({ window: '24h' }), 'window=24h'],
    ['a custom window', filters({ window: 'custom', from: '2026-11-30T08:00', to: '2026-11-30T09:30' }), 'window=custom&from=2026-11-30T08%3A00&to=2026-11-30T09%3A30'],
    ['every filter', filters({ actor: 'alice', operation: 'apiKeys.create', resource: 'api-keys*', outcome: 'success', allAccounts: true }), 'actor=alice&operation=apiKeys.create&resource=api-keys*&outcome=success&allAccounts=true'],
  ])('%s', (_, f, search) => {
    expect(filtersToSearch(f).toString()).toBe(search);
    expect(filtersFromSearch(new URLSearchParams(search))).toEqual(f);
  });

  it('takes defaults for what it does not know', () => {
    expect(filtersFromSearch(new URLSearchParams('window=2h&outcome=maybe&allAccounts=yes'))).toEqual(defaultFilters);
  });

  it('leaves from and to out of an address whose window is not custom', () => {
    expect(filtersToSearch(filters({ window: '1h', from: '2026-11-30T08:00' })).toString()).toBe('window=1h');
  });
});

describe('checkFilters', () => {
  it.each([
    ['the defaults', defaultFilters, {}],
    ['a prefix', filters({ operation: 'rules.*', resource: 'buses/orders*' }), {}],
    ['a star inside', filters({ operation: 'rules.*.create' }), { operation: 'A * may only end the text, for a prefix: rules.*' }],
    ['from after to', filters({ window: 'custom', from: '2026-11-30T10:00', to: '2026-11-30T09:00' }), { to: 'To is not after from.' }],
    ['a bad from', filters({ window: 'custom', from: 'yesterday' }), { from: 'Give a date and time.' }],
    ['only from', filters({ window: 'custom', from: '2026-11-30T10:00' }), {}],
  ])('%s', (_, f, want) => {
    expect(checkFilters(f)).toEqual(want);
  });
});

describe('filtersSet', () => {
  it.each([
    [defaultFilters, 0],
    [filters({ window: '24h' }), 1],
    [filters({ window: 'custom' }), 0],
    [filters({ window: 'custom', to: '2026-11-30T10:00', operation: 'rules.*', outcome: 'failure' }), 3],
    [filters({ allAccounts: true }), 0],
  ])('%j: %d', (f, n) => {
    expect(filtersSet(f)).toBe(n);
  });
});

describe('windowChoices', () => {
  it('offers each window once', () => {
    expect(new Set(windowChoices.map((c) => c.value)).size).toBe(windowChoices.length);
  });
});

describe('actorText', () => {
  it.each([
    [{ kind: 'user', id: 'u1', name: 'alice' }, 'User alice'],
    [{ kind: 'apiKey', id: 'k3mb' }, 'API key k3mb'],
    [{ kind: 'accessKey', id: 'AKIA1', name: 'terraform' }, 'Access key terraform'],
    [{ kind: 'anonymous' }, 'Anonymous'],
    [{ kind: 'clusterToken' }, 'Cluster token'],
    [undefined, 'Unknown'],
  ] as const)('%j: %s', (a, want) => {
    expect(actorText(a)).toBe(want);
  });
});

describe('outcomeText', () => {
  it.each([
    [{ outcome: 'success', status: 201 }, 'Success (201)'],
    [{ outcome: 'failure', status: 409, errorCode: 'BusNotEmpty' }, 'Failure (409 BusNotEmpty)'],
    [{ outcome: 'success' }, 'Success'],
    [{}, 'Unknown'],
  ] as const)('%j: %s', (e, want) => {
    expect(outcomeText(e)).toBe(want);
  });
});
