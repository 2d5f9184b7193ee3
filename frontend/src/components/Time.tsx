import { useSyncExternalStore } from 'react';
import { exactTime, relativeTime } from '../format';

// One clock for every relative time on the page: it ticks every 15 seconds while something shows one.
const TICK_MS = 15_000;
let now = Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(l: () => void) {
  listeners.add(l);
  if (!timer) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      listeners.forEach((f) => f());
    }, TICK_MS);
  }
  return () => {
    listeners.delete(l);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** useNow is the time now, read again every 15 seconds. */
export function useNow(): Date {
  return new Date(useSyncExternalStore(subscribe, () => now));
}

/**
 * RelativeTime shows an RFC 3339 time relative to now ("3 min ago") with the exact time on hover (title); nothing
 * for none.
 */
export function RelativeTime({ value, prefix = '' }: { value?: string; prefix?: string }) {
  const at = useNow();
  if (!value) return null;
  return (
    <time dateTime={value} title={exactTime(value)} style={{ whiteSpace: 'nowrap' }}>
      {prefix}
      {relativeTime(value, at)}
    </time>
  );
}
