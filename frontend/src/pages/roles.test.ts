import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/problem';
import { isForbidden, isRole, matrix, noAccessText, roleGrants, roles, roleSummary } from './roles';

/** documented reads the matrix of docs/identity.md: each permission's row, what it allows, and the roles ticked. */
function documented() {
  const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'identity.md'), 'utf8');
  const start = doc.indexOf('<!-- matrix:');
  const end = doc.indexOf('<!-- end of matrix -->');
  expect(start, 'docs/identity.md has no matrix').toBeGreaterThanOrEqual(0);
  const lines = doc
    .slice(start, end)
    .split('\n')
    .filter((l) => l.startsWith('|'));
  const cells = (l: string) => l.split('|').slice(1, -1).map((c) => c.trim());
  const header = cells(lines[0]).slice(2);
  return {
    header,
    rows: lines.slice(2).map((l) => {
      const [permission, allows, ...ticks] = cells(l);
      return { permission: permission.replace(/`/g, ''), allows, roles: header.filter((_, i) => ticks[i] === '✓') };
    }),
  };
}

describe('matrix', () => {
  it('is the matrix of docs/identity.md', () => {
    const doc = documented();
    expect(doc.header).toEqual([...roles]);
    expect(matrix.map((r) => ({ permission: r.permission, allows: r.allows, roles: [...r.roles] }))).toEqual(doc.rows);
  });
});

describe('roleGrants', () => {
  it.each([
    ['admin', 'access.manage', true],
    ['editor', 'access.manage', false],
    ['editor', 'events.put', true],
    ['operator', 'runtime.operate', true],
    ['operator', 'events.put', false],
    ['viewer', 'resources.read', true],
    ['viewer', 'resources.write', false],
    ['publisher', 'events.put', true],
    ['publisher', 'resources.read', false],
    ['admin', 'instance.manage', false],
    ['owner', 'resources.read', false],
    [undefined, 'authenticated', false],
  ] as const)('%s grants %s: %s', (role, permission, want) => {
    expect(roleGrants(role, permission)).toBe(want);
  });
});

describe('isRole', () => {
  it('knows the five roles only', () => {
    for (const r of roles) expect(isRole(r)).toBe(true);
    expect(isRole('Admin')).toBe(false);
    expect(isRole('')).toBe(false);
    expect(isRole(undefined)).toBe(false);
  });
});

describe('roleSummary', () => {
  it('says what every role may do in a sentence', () => {
    for (const r of roles) expect(roleSummary[r]).toMatch(/^[A-Z].*\.$/);
  });
});

describe('isForbidden', () => {
  it.each([
    ['a refused permission', new ApiError(403, { status: 403, code: 'Forbidden', detail: 'role viewer lacks access.manage' }), true],
    ['a cross-site refusal', new ApiError(403, { status: 403, code: 'CrossSiteRequestRefused' }), false],
    ['not found', new ApiError(404, { status: 404, code: 'AccountNotFound' }), false],
    ['a network error', new TypeError('Failed to fetch'), false],
  ])('%s: %s', (_, err, want) => {
    expect(isForbidden(err)).toBe(want);
  });
});

describe('noAccessText', () => {
  it('names the role, the account and who may', () => {
    expect(noAccessText('API keys', 'shop', 'viewer')).toBe(
      'Your role in account shop is viewer, which may not manage API keys: that takes the permission access.manage, which only the admin role has. Ask an administrator of account shop, or choose another account in the header.',
    );
  });
  it('does without a role it does not know', () => {
    expect(noAccessText('the audit log', 'shop', undefined)).toMatch(/^You may not manage the audit log in account shop: /);
  });
});
