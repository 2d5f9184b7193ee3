import { ApiError } from '../api/problem';

/**
 * The roles of an account and what each may do: the matrix of docs/identity.md ("Roles and permissions"), which
 * domain/access writes. The console has no API to read it, so it is kept here and roles.test.ts compares it with
 * the document: a change of the matrix fails that test until this table follows. Pure: no React here.
 */

/** Roles are every role, from most to least powerful. */
export const roles = ['admin', 'editor', 'operator', 'viewer', 'publisher'] as const;
export type Role = (typeof roles)[number];

export type Permission =
  | 'resources.read'
  | 'resources.write'
  | 'runtime.operate'
  | 'events.put'
  | 'patterns.test'
  | 'secrets.read'
  | 'access.manage'
  | 'instance.manage'
  | 'authenticated';

export interface PermissionRow {
  permission: Permission;
  /** allows says what the permission allows, as the matrix words it. */
  allows: string;
  /** roles are the roles that grant it in their account (none for instance.manage: instance administrators'). */
  roles: readonly Role[];
}

/** matrix is docs/identity.md's table: each permission, what it allows, and the roles that grant it. */
export const matrix: readonly PermissionRow[] = [
  {
    permission: 'resources.read',
    allows: 'read buses, rules, targets, sources, connections, API destinations, event types, runtime, dead letters',
    roles: ['admin', 'editor', 'operator', 'viewer'],
  },
  {
    permission: 'resources.write',
    allows: 'create, change, delete buses, rules, targets, sources, connections, API destinations',
    roles: ['admin', 'editor'],
  },
  {
    permission: 'runtime.operate',
    allows: 'runtime actions (pause, resume, stop, restart), redrive and discard dead letters, replays',
    roles: ['admin', 'editor', 'operator'],
  },
  { permission: 'events.put', allows: 'put events (every PutEvents of every dialect)', roles: ['admin', 'editor', 'publisher'] },
  { permission: 'patterns.test', allows: 'test a pattern or a transformer (pure functions)', roles: ['admin', 'editor', 'operator', 'viewer', 'publisher'] },
  { permission: 'secrets.read', allows: 'read webhook tokens and other sealed-but-readable values', roles: ['admin', 'editor'] },
  { permission: 'access.manage', allows: 'members, API keys, audit log', roles: ['admin'] },
  { permission: 'instance.manage', allows: 'accounts and users (instance administrators only)', roles: [] },
  { permission: 'authenticated', allows: 'who am I (any valid credential)', roles: ['admin', 'editor', 'operator', 'viewer', 'publisher'] },
];

/** isRole reports whether s names a role. */
export function isRole(s: string | undefined): s is Role {
  return (roles as readonly string[]).includes(s ?? '');
}

/** roleGrants reports whether role grants permission in its account (false for a role it does not know). */
export function roleGrants(role: string | undefined, permission: Permission): boolean {
  if (!isRole(role)) return false;
  return matrix.some((row) => row.permission === permission && row.roles.includes(role));
}

/** roleSummary says in a sentence what a role may do in its account, for the role pickers. */
export const roleSummary: Record<Role, string> = {
  admin: 'Everything in the account: resources, the runtime, events, secrets, and its members, keys and audit log.',
  editor: 'Create and change resources, operate the runtime, put events and read secrets; not members or keys.',
  operator: 'Read everything and operate the runtime (pause, resume, stop, restart, redrive dead letters).',
  viewer: 'Read resources, the runtime and dead letters, and test patterns; change nothing.',
  publisher: 'Put events on buses and test patterns; read nothing else. For programs that send events.',
};

/** roleOptions are the choices of a role picker, most powerful first. */
export const roleOptions = roles.map((r) => ({ value: r, label: r }));

/** isForbidden reports whether err is the API's 403 Forbidden: the caller's role lacks the operation's permission. */
export function isForbidden(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403 && err.problem.code !== 'CrossSiteRequestRefused';
}

/**
 * noAccessText says why a page of the access section is not available to the caller: what it manages (a noun
 * phrase: "the members of an account"), the account, the caller's role there when known, and who may.
 */
export function noAccessText(what: string, account: string, role: string | undefined): string {
  const where = account ? `account ${account}` : 'this account';
  const who = role ? `Your role in ${where} is ${role}, which may not manage ${what}` : `You may not manage ${what} in ${where}`;
  return `${who}: that takes the permission access.manage, which only the admin role has. Ask an administrator of ${where}, or choose another account in the header.`;
}
