import { api, enc, type PasswordChange, type SessionList, type SignInBody, type UserSession } from './client';
import { ApiError, errorText, problemText, waitText } from './problem';
import { noSession, resumeSession, session, signOut } from './session';

// The REST calls of users' console sessions (docs/identity.md, "Sessions") and what their errors say in plain
// words. The session store (session.ts) keeps what they answer.

/**
 * createSession signs a user in with POST /api/v1/session: the server sets the HttpOnly session cookie and
 * answers the session with its CSRF token. It sends none of the console's credentials and changes no state:
 * the sign-in screen keeps the answer (signInWithSession) after clearing what was read before.
 */
export async function createSession(username: string, password: string): Promise<UserSession & { csrfToken: string }> {
  const body: SignInBody = { username, password };
  const s = await api<UserSession>('/session', { method: 'POST', body, anonymous: true });
  if (!s?.csrfToken) throw new Error('The server signed you in but answered no CSRF token; changes would be refused.');
  return { ...s, csrfToken: s.csrfToken };
}

let checking: Promise<void> | undefined;

/**
 * checkSession asks GET /api/v1/session whether the browser still has a live session (after a reload, when the
 * page has forgotten the CSRF token) and keeps it (resumeSession), or ends the check (noSession): a 401 means
 * signed out, and any other failure is said on the sign-in screen. Calls while one is under way share it.
 */
export function checkSession(): Promise<void> {
  checking ??= (async () => {
    try {
      const s = await api<UserSession>('/session', { anonymous: true });
      if (s?.username && s.csrfToken) resumeSession(s.username, s.csrfToken);
      else noSession();
    } catch (err) {
      noSession(err instanceof ApiError && err.status === 401 ? undefined : `Could not check whether you are signed in: ${errorText(err)}`);
    } finally {
      checking = undefined;
    }
  })();
  return checking;
}

/** signedOutNotice is what the sign-in screen says after Sign out. */
export const signedOutNotice = 'You signed out.';

/**
 * endSession signs out: a user's session ends on the server first (DELETE /api/v1/session, which also clears the
 * cookie); an API key is only forgotten. It throws when the server could not end the session (the console then
 * stays signed in, so that nobody walks away from a session they think is ended); a session that had already ended
 * (401) is signed out all the same.
 */
export async function endSession(): Promise<void> {
  const c = session().credential;
  if (c?.kind === 'session') {
    try {
      await api<void>('/session', { method: 'DELETE' });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) throw err;
    }
  }
  signOut(signedOutNotice);
}

/** listSessions reads the user's live sessions, newest first (GET /api/v1/me/sessions). */
export async function listSessions(): Promise<UserSession[]> {
  return (await api<SessionList>('/me/sessions')).sessions ?? [];
}

/** revokedNotice is what the sign-in screen says after the user ended this browser's own session. */
export const revokedNotice = 'You ended this browser’s session. Sign in again to go on.';

/**
 * revokeSession ends one of the user's sessions (DELETE /api/v1/me/sessions/{id}); ending the current one signs
 * out here too.
 */
export async function revokeSession(s: UserSession): Promise<void> {
  await api<void>(`/me/sessions/${enc(s.id ?? '')}`, { method: 'DELETE' });
  if (s.current) signOut(revokedNotice);
}

/** passwordChangedNotice is what the sign-in screen says after the user changed their password. */
export const passwordChangedNotice = 'Your password was changed and every session of yours ended, this one too. Sign in with the new password.';

/**
 * changePassword changes the user's password (PUT /api/v1/me/password); the server then ends every session of the
 * user, this one too, so the console signs out with passwordChangedNotice.
 */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  const body: PasswordChange = { currentPassword, newPassword };
  await api<void>('/me/password', { method: 'PUT', body });
  signOut(passwordChangedNotice);
}

/** passwordSignInError says in plain words why a sign-in with a user name and password did not work. */
export function passwordSignInError(err: unknown): string {
  if (!(err instanceof ApiError)) return errorText(err);
  switch (err.status) {
    case 401:
      return 'Invalid user name or password.';
    case 429:
      return err.retryAfter !== undefined
        ? `Too many failed sign-ins for this user name from this address. Wait ${waitText(err.retryAfter)} before you try again.`
        : `Too many failed sign-ins for this user name from this address. ${err.message}`;
    case 403:
      if (err.problem.code === 'CrossSiteRequestRefused') {
        return `The server refused this sign-in as coming from another site: ${err.message} Open the console at the address the server is configured with (--public-url).`;
      }
  }
  return err.message;
}

/** PasswordChangeErrors are the messages of the password form, by field; form is for the rest. */
export interface PasswordChangeErrors {
  currentPassword?: string;
  newPassword?: string;
  repeat?: string;
  form?: string;
}

/** MinPasswordLength is the server's minimum length of a password (domain/user). */
export const MinPasswordLength = 8;

/** checkPasswordChange checks the password form before it is sent; an empty result lets it be sent. */
export function checkPasswordChange(current: string, next: string, repeat: string): PasswordChangeErrors {
  const e: PasswordChangeErrors = {};
  if (current === '') e.currentPassword = 'Enter your current password.';
  if (next.length < MinPasswordLength) e.newPassword = `A password has at least ${MinPasswordLength} characters.`;
  else if (next === current) e.newPassword = 'The new password is the current one.';
  if (repeat !== next) e.repeat = 'The two new passwords differ.';
  return e;
}

/** passwordChangeError places the server's refusal of a password change on the field it concerns. */
export function passwordChangeError(err: unknown): PasswordChangeErrors {
  if (err instanceof ApiError) {
    if (err.status === 403 && err.problem.code === 'Forbidden') return { currentPassword: 'The current password is wrong.' };
    const field = err.problem.field;
    // The field is said by where the message stands.
    if (err.status === 400 && (field === 'password' || field === 'newPassword')) return { newPassword: problemText({ ...err.problem, field: undefined }, 400) };
  }
  return { form: errorText(err) };
}
