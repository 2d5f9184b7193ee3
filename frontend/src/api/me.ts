import type { Account, Me } from './client';
import { ApiError, errorText } from './problem';

/** signInError says in plain words why the sign-in screen did not accept a key (checked with GET /api/v1/me). */
export function signInError(err: unknown): string {
  if (err instanceof ApiError && err.status === 401) return 'This API key is not valid (unknown, revoked or expired).';
  return errorText(err);
}

/**
 * accountChoices are the accounts the header's selector offers, sorted, the caller's own first: every account for
 * an instance administrator (GET /api/v1/accounts), else the accounts /me lists the caller as a member of.
 */
export function accountChoices(me: Me, all: Account[] | undefined): string[] {
  const ids = me.instanceAdmin ? (all ?? []).map((a) => a.id ?? '') : (me.accounts ?? []).map((m) => m.account ?? '');
  const others = [...new Set(ids)].filter((id) => id !== '' && id !== me.account).sort();
  return me.account ? [me.account, ...others] : others;
}

/** roleIn is the caller's role in account: admin everywhere for an instance administrator. */
export function roleIn(me: Me, account: string): string | undefined {
  if (account === me.account) return me.role;
  if (me.instanceAdmin) return 'admin';
  return me.accounts?.find((m) => m.account === account)?.role;
}
