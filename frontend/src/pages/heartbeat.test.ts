import { describe, expect, it } from 'vitest';
import { heartbeatAge } from './heartbeat';

describe('heartbeatAge', () => {
  const now = new Date('2026-11-30T12:00:00.000Z');
  it.each([
    ['2026-11-30T11:59:59.600Z', '0.4 s ago'],
    ['2026-11-30T11:59:48Z', '12 s ago'],
    ['2026-11-30T11:57:00Z', '3 min ago'],
    ['2026-11-30T12:00:01Z', 'just now'],
    [undefined, 'unknown'],
    ['not a time', 'unknown'],
  ])('%s reads as %s', (last, want) => {
    expect(heartbeatAge(last, now)).toBe(want);
  });
});
