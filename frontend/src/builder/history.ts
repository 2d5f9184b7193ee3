/**
 * Undo and redo of an editor: a bounded stack of snapshots of what the user changes. The editor records the state
 * it is about to leave before each change; undo goes back to the last one recorded, redo forward again. Pure: the
 * caller passes the time, which makes the coalescing of quick edits testable.
 */

/** MAX_STEPS is how many changes can be undone; older ones are forgotten. */
export const MAX_STEPS = 100;

/** COALESCE_MS is how close in time two changes of the same key must be to make one step (typing a word). */
export const COALESCE_MS = 600;

export interface History<S> {
  /** past holds the states before each change, the latest last. */
  past: S[];
  /** future holds the states undone, the next redo last. */
  future: S[];
  /** key and at are the coalescing key and the time of the last change recorded. */
  key?: string;
  at: number;
}

export function emptyHistory<S>(): History<S> {
  return { past: [], future: [], at: 0 };
}

/**
 * record returns the history with before (the state the editor is leaving) as a step to undo, and nothing to
 * redo. A change with the same key as the previous one, within COALESCE_MS of it, adds no step: undoing it goes
 * back to before the first of the run. A change without a key is always a step of its own.
 */
export function record<S>(h: History<S>, before: S, key: string | undefined, now: number): History<S> {
  if (key !== undefined && key === h.key && now - h.at < COALESCE_MS && h.past.length > 0) {
    return { ...h, future: [], at: now };
  }
  const past = [...h.past, before].slice(-MAX_STEPS);
  return { past, future: [], key, at: now };
}

/** undo returns the state to go back to and the new history; undefined when there is nothing to undo. */
export function undo<S>(h: History<S>, current: S): { state: S; history: History<S> } | undefined {
  if (h.past.length === 0) return undefined;
  const state = h.past[h.past.length - 1];
  return { state, history: { past: h.past.slice(0, -1), future: [...h.future, current], at: 0 } };
}

/** redo is the inverse of undo; undefined when nothing was undone since the last change. */
export function redo<S>(h: History<S>, current: S): { state: S; history: History<S> } | undefined {
  if (h.future.length === 0) return undefined;
  const state = h.future[h.future.length - 1];
  return { state, history: { past: [...h.past, current].slice(-MAX_STEPS), future: h.future.slice(0, -1), at: 0 } };
}
