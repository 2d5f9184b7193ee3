import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  allPages,
  createAccessKey,
  createApiKey,
  listApiKeys,
  listAuditLog,
  listMembers,
  removeMember,
  revokeAccessKey,
  revokeApiKey,
  setMember,
} from './access';
import { serve } from './fakeServer';
import { ApiError } from './problem';
import { chooseAccount, signInWithSession, signOut } from './session';

const TOKEN = 'csrf-token-1';

beforeEach(() => {
  signOut();
  signInWithSession('alice', TOKEN);
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('allPages', () => {
  it('follows nextToken to the last page', async () => {
    const tokens: (string | undefined)[] = [];
    const got = await allPages(async (t) => {
      tokens.push(t);
      return t === undefined ? { items: [1, 2], nextToken: 'b' } : t === 'b' ? { items: [3], nextToken: 'c' } : { items: [4] };
    });
    expect(got).toEqual({ items: [1, 2, 3, 4], truncated: false });
    expect(tokens).toEqual([undefined, 'b', 'c']);
  });

  it('stops after maxPages and says so', async () => {
    let calls = 0;
    const got = await allPages(async () => {
      calls++;
      return { items: [calls], nextToken: 'more' };
    }, 3);
    expect(got).toEqual({ items: [1, 2, 3], truncated: true });
  });
});

describe('members', () => {
  it('lists the members of the account in the path, page by page', async () => {
    const seen = serve((r) =>
      r.url.includes('nextToken')
        ? { status: 200, body: { members: [{ username: 'carol', role: 'viewer' }] } }
        : { status: 200, body: { members: [{ username: 'alice', role: 'admin' }, { username: 'bob', role: 'editor' }], nextToken: 'n2' } },
    );
    const got = await listMembers('shop');
    expect(got.items.map((m) => m.username)).toEqual(['alice', 'bob', 'carol']);
    expect(seen.map((r) => r.url)).toEqual(['/api/v1/accounts/shop/members?limit=500', '/api/v1/accounts/shop/members?limit=500&nextToken=n2']);
  });

  it('puts a role with the CSRF token, and deletes a membership', async () => {
    const seen = serve((r) => (r.method === 'PUT' ? { status: 201, body: { username: 'bob', role: 'operator' } } : { status: 204 }));
    expect(await setMember('shop', 'bob', 'operator')).toEqual({ username: 'bob', role: 'operator' });
    await removeMember('shop', 'bob@example.com');
    expect(seen.map((r) => [r.method, r.url, r.body, r.headers['X-CSRF-Token']])).toEqual([
      ['PUT', '/api/v1/accounts/shop/members/bob', '{"role":"operator"}', TOKEN],
      ['DELETE', '/api/v1/accounts/shop/members/bob%40example.com', undefined, TOKEN],
    ]);
  });

  it('throws the API’s 403 for a role without access.manage', async () => {
    serve({ status: 403, body: { status: 403, code: 'Forbidden', detail: 'role viewer lacks access.manage' } });
    await expect(listMembers('shop')).rejects.toBeInstanceOf(ApiError);
  });
});

describe('keys', () => {
  it('lists, creates and revokes API keys in the chosen account', async () => {
    chooseAccount('shop');
    const seen = serve((r) => {
      if (r.method === 'POST') return { status: 201, body: { id: 'k1', name: 'ci', role: 'publisher', secret: 'ebk_k1_s' } };
      if (r.method === 'DELETE') return { status: 204 };
      return { status: 200, body: { apiKeys: [{ id: 'k1', name: 'ci' }] } };
    });
    expect((await listApiKeys()).items).toEqual([{ id: 'k1', name: 'ci' }]);
    expect((await createApiKey({ name: 'ci', role: 'publisher', buses: ['orders'] })).secret).toBe('ebk_k1_s');
    await revokeApiKey('k1');
    expect(seen.map((r) => [r.method, r.url, r.headers['X-Account-Id']])).toEqual([
      ['GET', '/api/v1/api-keys?limit=500', 'shop'],
      ['POST', '/api/v1/api-keys', 'shop'],
      ['DELETE', '/api/v1/api-keys/k1', 'shop'],
    ]);
    expect(JSON.parse(seen[1].body ?? '')).toEqual({ name: 'ci', role: 'publisher', buses: ['orders'] });
  });

  it('creates and revokes access keys', async () => {
    const seen = serve((r) => (r.method === 'POST' ? { status: 201, body: { accessKeyId: 'AKIA1', secretAccessKey: 's' } } : { status: 204 }));
    expect((await createAccessKey({ name: 'tf', role: 'editor' })).secretAccessKey).toBe('s');
    await revokeAccessKey('AKIA1');
    expect(seen.map((r) => [r.method, r.url])).toEqual([
      ['POST', '/api/v1/access-keys'],
      ['DELETE', '/api/v1/access-keys/AKIA1'],
    ]);
  });
});

describe('listAuditLog', () => {
  it('sends the query’s filters and leaves out the empty ones', async () => {
    const seen = serve({ status: 200, body: { entries: [], nextToken: 'n' } });
    expect(await listAuditLog({ operation: 'rules.*', actor: undefined, outcome: '', limit: 50, nextToken: 't' })).toEqual({ entries: [], nextToken: 'n' });
    expect(seen[0].url).toBe('/api/v1/audit-log?operation=rules.*&limit=50&nextToken=t');
  });
});
