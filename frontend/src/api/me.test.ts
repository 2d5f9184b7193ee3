import { describe, expect, it } from 'vitest';
import type { Me } from './client';
import { accountChoices, roleIn, signInError } from './me';
import { ApiError } from './problem';

const admin: Me = { kind: 'apiKey', name: 'bootstrap-admin', instanceAdmin: true, account: 'default', role: 'admin', accounts: [{ account: 'default', role: 'admin' }] };
const member: Me = {
  kind: 'user',
  name: 'alice',
  instanceAdmin: false,
  account: 'shop',
  role: 'editor',
  accounts: [
    { account: 'shop', role: 'editor' },
    { account: 'billing', role: 'viewer' },
  ],
};

describe('accountChoices', () => {
  it('offers an instance administrator every account, its own first', () => {
    expect(accountChoices(admin, [{ id: 'zoo' }, { id: 'default' }, { id: 'billing' }])).toEqual(['default', 'billing', 'zoo']);
  });
  it('offers an instance administrator its own account while the list loads', () => {
    expect(accountChoices(admin, undefined)).toEqual(['default']);
  });
  it('offers others their memberships only', () => {
    expect(accountChoices(member, [{ id: 'secret' }])).toEqual(['shop', 'billing']);
  });
});

describe('roleIn', () => {
  it.each([
    { name: 'own account', me: member, account: 'shop', want: 'editor' },
    { name: 'another membership', me: member, account: 'billing', want: 'viewer' },
    { name: 'not a member', me: member, account: 'other', want: undefined },
    { name: 'instance administrator anywhere', me: admin, account: 'zoo', want: 'admin' },
  ])('$name', ({ me, account, want }) => {
    expect(roleIn(me, account)).toBe(want);
  });
});

describe('signInError', () => {
  it.each([
    { name: 'a refused key', err: new ApiError(401, { status: 401, code: 'Unauthenticated', detail: 'missing or invalid credentials' }), want: 'This API key is not valid (unknown, revoked or expired).' },
    { name: 'no server', err: new TypeError('Failed to fetch'), want: 'The server cannot be reached: Failed to fetch.' },
    { name: 'a server failure', err: new ApiError(503, { status: 503 }), want: 'The service is unavailable; try again shortly.' },
  ])('$name', ({ err, want }) => {
    expect(signInError(err)).toBe(want);
  });
});
