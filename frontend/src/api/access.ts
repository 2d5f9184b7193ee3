import { api, enc, type Schemas } from './client';

// The REST calls of the access pages (docs/identity.md): an account's members, API keys and access keys, and the
// audit log. Each needs access.manage (the admin role) in the account requests act in; the API answers 403
// otherwise, which the pages say in words.

export type Member = Schemas['Member'];
export type ApiKey = Schemas['ApiKey'];
export type AccessKey = Schemas['AccessKey'];
export type AuditEntry = Schemas['AuditEntry'];
export type AuditLog = Schemas['AuditLog'];
export type User = Schemas['User'];

/** Pages is what allPages read: the items, and whether it stopped before the last page. */
export interface Pages<T> {
  items: T[];
  truncated: boolean;
}

/**
 * allPages reads a list page by page, following nextToken, at most maxPages pages (a list longer than that is of no
 * use on one screen; truncated says it was cut).
 */
export async function allPages<T>(load: (nextToken: string | undefined) => Promise<{ items: T[]; nextToken?: string }>, maxPages = 20): Promise<Pages<T>> {
  const items: T[] = [];
  let token: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await load(token);
    items.push(...page.items);
    token = page.nextToken;
    if (!token) return { items, truncated: false };
  }
  return { items, truncated: true };
}

const PAGE = 500;

/** listMembers reads the members of account with their roles, ordered by login name. */
export function listMembers(account: string): Promise<Pages<Member>> {
  return allPages(async (nextToken) => {
    const d = await api<Schemas['MemberList']>(`/accounts/${enc(account)}/members`, { query: { limit: PAGE, nextToken } });
    return { items: d.members ?? [], nextToken: d.nextToken };
  });
}

/** setMember makes an existing user a member of account with role, or changes the role of a member. */
export function setMember(account: string, username: string, role: string): Promise<Member> {
  const body: Schemas['RoleAssignment'] = { role: role as Schemas['RoleAssignment']['role'] };
  return api<Member>(`/accounts/${enc(account)}/members/${enc(username)}`, { method: 'PUT', body });
}

/** removeMember ends a user's membership of account (the user stays). */
export function removeMember(account: string, username: string): Promise<void> {
  return api<void>(`/accounts/${enc(account)}/members/${enc(username)}`, { method: 'DELETE' });
}

/** listUsers reads the installation's users (instance administrators only), to suggest whom to add. */
export function listUsers(): Promise<Pages<User>> {
  return allPages(async (nextToken) => {
    const d = await api<Schemas['UserList']>('/users', { query: { limit: PAGE, nextToken } });
    return { items: d.users ?? [], nextToken: d.nextToken };
  });
}

/** listApiKeys reads the account's API keys that are not revoked, without secrets. */
export function listApiKeys(): Promise<Pages<ApiKey>> {
  return allPages(async (nextToken) => {
    const d = await api<Schemas['ApiKeyList']>('/api-keys', { query: { limit: PAGE, nextToken } });
    return { items: d.apiKeys ?? [], nextToken: d.nextToken };
  });
}

/** createApiKey creates an API key; the answer holds its secret, which is never answered again. */
export function createApiKey(body: ApiKey): Promise<ApiKey> {
  return api<ApiKey>('/api-keys', { method: 'POST', body });
}

/** revokeApiKey revokes an API key: it stops working within a second on every replica. */
export function revokeApiKey(id: string): Promise<void> {
  return api<void>(`/api-keys/${enc(id)}`, { method: 'DELETE' });
}

/** listAccessKeys reads the account's access keys that are not revoked, without secrets. */
export function listAccessKeys(): Promise<Pages<AccessKey>> {
  return allPages(async (nextToken) => {
    const d = await api<Schemas['AccessKeyList']>('/access-keys', { query: { limit: PAGE, nextToken } });
    return { items: d.accessKeys ?? [], nextToken: d.nextToken };
  });
}

/** createAccessKey creates an access key; the answer holds its secret access key, which is never answered again. */
export function createAccessKey(body: AccessKey): Promise<AccessKey> {
  return api<AccessKey>('/access-keys', { method: 'POST', body });
}

/** revokeAccessKey revokes (deletes) an access key. */
export function revokeAccessKey(id: string): Promise<void> {
  return api<void>(`/access-keys/${enc(id)}`, { method: 'DELETE' });
}

/** listAuditLog reads one page of the audit log, newest first, for a query made by auditQuery (pages/auditLog.ts). */
export function listAuditLog(query: Record<string, string | number | undefined>): Promise<AuditLog> {
  return api<AuditLog>('/audit-log', { query });
}
