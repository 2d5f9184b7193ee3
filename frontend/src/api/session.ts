/**
 * The console's sign-in session: the API key every request sends and the account the user picked. Both live in
 * sessionStorage (gone with the tab, never shared with other tabs or written to disk by the app). The App
 * subscribes with useSyncExternalStore and shows the sign-in screen whenever there is no key; the API client
 * reports a refused key here, so a 401 on any page leads back to the sign-in screen with a notice saying why.
 */

const KEY = 'eb.apiKey';
const ACCOUNT = 'eb.account';

/** refusedNotice is what the sign-in screen says after the server refused the key the console was using. */
export const refusedNotice = 'The server refused your API key (unknown, revoked or expired). Sign in again.';

export interface Session {
  /** key is the API key sent as a bearer token; undefined: signed out. */
  key?: string;
  /** account is the account the user picked (sent as X-Account-Id); undefined: the key's own. */
  account?: string;
  /** notice says why the user is signed out, when it was not their own doing. */
  notice?: string;
}

type KeyValues = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

// Where sessionStorage is missing or forbidden (some privacy settings, tests), the session lives in memory: it
// then ends with the page.
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
const listeners = new Set<() => void>();

function read(): Session {
  const s = storage();
  return { key: s.getItem(KEY) || undefined, account: s.getItem(ACCOUNT) || undefined, notice };
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

/** signIn stores a key the server accepted; the account starts as the key's own. */
export function signIn(key: string) {
  const s = storage();
  s.setItem(KEY, key);
  s.removeItem(ACCOUNT);
  notice = undefined;
  changed();
}

/** signOut forgets the key and the picked account; notice (if any) is shown on the sign-in screen. */
export function signOut(why?: string) {
  const s = storage();
  s.removeItem(KEY);
  s.removeItem(ACCOUNT);
  notice = why;
  changed();
}

/**
 * keyRefused is called by the API client on a 401 answer to a request made with key. It signs out only when key
 * is still the session's key: a late answer to a request made with an earlier key, or the check of a key typed on
 * the sign-in screen, must not end the current session.
 */
export function keyRefused(key: string | undefined) {
  if (key !== undefined && key === session().key) signOut(refusedNotice);
}

/** chooseAccount sets the account requests act in; undefined (or the key's own account) sends no X-Account-Id. */
export function chooseAccount(account: string | undefined) {
  const s = storage();
  if (account) s.setItem(ACCOUNT, account);
  else s.removeItem(ACCOUNT);
  changed();
}
