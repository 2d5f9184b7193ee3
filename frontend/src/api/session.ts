/**
 * The console's sign-in state: the credential every request sends and the account the user picked. The App
 * subscribes with useSyncExternalStore and shows the sign-in screen whenever there is no credential; the API client
 * reports a refused credential here, so a 401 on any page leads back to the sign-in screen with a notice saying why.
 *
 * There are two credentials:
 * - a **session** (a user signed in with a password): the browser keeps the HttpOnly cookie eb_session, which the
 *   page never sees; the page keeps only the session's CSRF token (sent in X-CSRF-Token on every request that
 *   changes something) and the user name, in memory. A reload forgets them; the App then asks GET /api/v1/session
 *   (which answers them again while the cookie is live) before it shows anything: `checking` says it is asking.
 * - an **API key**, kept in sessionStorage (gone with the tab, never shared with other tabs or written to disk by
 *   the app) and sent as a bearer token.
 *
 * The picked account is in sessionStorage too: a reload keeps it for either credential.
 */

const KEY = 'eb.apiKey';
const ACCOUNT = 'eb.account';

/** refusedNotice is what the sign-in screen says after the server refused the key the console was using. */
export const refusedNotice = 'The server refused your API key (unknown, revoked or expired). Sign in again.';
/** sessionEndedNotice is what the sign-in screen says after the server answered 401 to the session's cookie. */
export const sessionEndedNotice = 'Your session ended; sign in again.';

export type Credential =
  /** An API key, sent as Authorization: Bearer. */
  | { kind: 'apiKey'; key: string }
  /** A user's session: the browser sends the cookie; csrfToken goes in X-CSRF-Token on changes. */
  | { kind: 'session'; username: string; csrfToken: string };

/** SignInMethod is how the sign-in screen asks: a user name and password, or an API key. */
export type SignInMethod = 'password' | 'apiKey';

export interface Session {
  /** credential is what requests are authenticated by; undefined: signed out (or still checking). */
  credential?: Credential;
  /** account is the account the user picked (sent as X-Account-Id); undefined: the credential's own. */
  account?: string;
  /** notice says why the user is signed out, when it was not their own doing, or what their last action did. */
  notice?: string;
  /** checking: the console is asking the server whether the browser still has a session (after a reload). */
  checking: boolean;
  /** method is how the sign-in screen asks: the way this tab signed in last, a password at first. */
  method: SignInMethod;
}

type KeyValues = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

// Where sessionStorage is missing or forbidden (some privacy settings, tests), the key and account live in memory:
// they then end with the page.
const memory = new Map<string, string>();
const inMemory: KeyValues = {
  getItem: (k) => memory.get(k) ?? null,
  setItem: (k, v) => void memory.set(k, v),
  removeItem: (k) => void memory.delete(k),
};

function storage(): KeyValues {
  try {
    if (globalThis.sessionStorage) return globalThis.sessionStorage;
  } catch {
    /* forbidden: fall through */
  }
  return inMemory;
}

let current: Session | undefined;
let notice: string | undefined;
// The user's session: in memory only, never in storage (the CSRF token must not outlive the page's memory).
let userSession: Extract<Credential, { kind: 'session' }> | undefined;
// The key's credential object, kept while the stored key is the same, so that a snapshot's credential is stable.
let keyCredential: Extract<Credential, { kind: 'apiKey' }> | undefined;
// Until the first check of the cookie (or a sign-in), a page without a key does not know whether it is signed in.
let checking = true;
let method: SignInMethod = 'password';
// When the server ended a user's session (a 401), the account this tab acted in: the same user signing in again
// in this tab gets it back, so that they return to the page they were on as it was (the address is kept anyway).
let returnTo: { username: string; account: string } | undefined;
const listeners = new Set<() => void>();

function read(): Session {
  const s = storage();
  const key = s.getItem(KEY) || undefined;
  if (key && keyCredential?.key !== key) keyCredential = { kind: 'apiKey', key };
  const credential: Credential | undefined = key ? keyCredential : userSession;
  return {
    credential,
    account: credential ? s.getItem(ACCOUNT) || undefined : undefined,
    notice,
    checking: credential === undefined && checking,
    method,
  };
}

function changed() {
  current = read();
  for (const l of listeners) l();
}

/** session is the current session; the same object until it changes (a useSyncExternalStore snapshot). */
export function session(): Session {
  current ??= read();
  return current;
}

/** subscribe calls listener after every change of the session; it returns the unsubscribe function. */
export function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** signInWithKey stores a key the server accepted; the account starts as the key's own. */
export function signInWithKey(key: string) {
  const s = storage();
  s.setItem(KEY, key);
  s.removeItem(ACCOUNT);
  returnTo = undefined;
  userSession = undefined;
  notice = undefined;
  checking = false;
  method = 'apiKey';
  changed();
}

/**
 * signInWithSession keeps the session the server just made (POST /api/v1/session): its user name and CSRF token.
 * The account starts as the user's own, or, when the server had ended this user's session in this tab, as the
 * account the tab acted in then.
 */
export function signInWithSession(username: string, csrfToken: string) {
  const s = storage();
  s.removeItem(ACCOUNT);
  if (returnTo?.username === username) s.setItem(ACCOUNT, returnTo.account);
  returnTo = undefined;
  resumeSession(username, csrfToken);
}

/**
 * resumeSession keeps a session the browser already had (GET /api/v1/session after a reload), and the account
 * this tab had picked. It also takes a fresh CSRF token for the current session.
 */
export function resumeSession(username: string, csrfToken: string) {
  storage().removeItem(KEY);
  userSession = { kind: 'session', username, csrfToken };
  notice = undefined;
  checking = false;
  method = 'password';
  changed();
}

/** noSession ends the check after a reload: the browser has no live session; notice (if any) says why. */
export function noSession(why?: string) {
  if (session().credential) return; // signed in meanwhile (another path): keep it
  storage().removeItem(ACCOUNT);
  notice = why;
  checking = false;
  changed();
}

/** signOut forgets the credential and the picked account; notice (if any) is shown on the sign-in screen. */
export function signOut(why?: string) {
  const s = storage();
  s.removeItem(KEY);
  s.removeItem(ACCOUNT);
  userSession = undefined;
  returnTo = undefined;
  notice = why;
  checking = false;
  changed();
}

/** sameCredential reports whether a and b are one credential (the same key, or the same session's token). */
export function sameCredential(a: Credential | undefined, b: Credential | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  if (a.kind === 'apiKey' && b.kind === 'apiKey') return a.key === b.key;
  if (a.kind === 'session' && b.kind === 'session') return a.csrfToken === b.csrfToken;
  return false;
}

/**
 * credentialRefused is called by the API client on a 401 answer to a request made with credential. It signs out
 * only when credential is still the session's: a late answer to a request made with an earlier one, or the check
 * of a key typed on the sign-in screen, must not end the current session. A user's session that ended keeps the
 * account the tab acted in for that user's next sign-in here (signInWithSession).
 */
export function credentialRefused(credential: Credential | undefined) {
  if (!sameCredential(credential, session().credential)) return;
  const account = session().account;
  signOut(credential?.kind === 'apiKey' ? refusedNotice : sessionEndedNotice);
  if (credential?.kind === 'session' && account) returnTo = { username: credential.username, account };
}

/** chooseAccount sets the account requests act in; undefined (or the credential's own account) sends no X-Account-Id. */
export function chooseAccount(account: string | undefined) {
  const s = storage();
  if (account) s.setItem(ACCOUNT, account);
  else s.removeItem(ACCOUNT);
  changed();
}

/** chooseMethod switches the sign-in screen between a password and an API key. */
export function chooseMethod(m: SignInMethod) {
  if (m === method) return;
  method = m;
  changed();
}
