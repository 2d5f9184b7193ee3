import { describe, expect, it } from 'vitest';
import { customWindowErrors, windowBounds } from './timeWindow';

const now = new Date('2026-12-01T12:00:00Z');

describe('windowBounds', () => {
  it('starts a span that long before now and leaves its end open', () => {
    expect(windowBounds('15m', '', '', now)).toEqual({ from: '2026-12-01T11:45:00.000Z' });
    expect(windowBounds('30d', '', '', now)).toEqual({ from: '2026-11-01T12:00:00.000Z' });
  });
  it('bounds nothing for any time', () => {
    expect(windowBounds('any', '2026-12-01T10:00', '', now)).toEqual({});
  });
  it('reads a custom window in the browser zone, and bounds nothing with what is not a time', () => {
    const b = windowBounds('custom', '2026-12-01T10:00', 'soon', now);
    expect(b.from).toBe(new Date(2026, 11, 1, 10, 0).toISOString());
    expect(b.to).toBeUndefined();
  });
});

describe('customWindowErrors', () => {
  it('names each field that is not a date and time', () => {
    expect(customWindowErrors('yesterday', 'soon')).toEqual({ from: 'Give a date and time.', to: 'Give a date and time.' });
  });
  it('wants to after from', () => {
    expect(customWindowErrors('2026-12-01T11:00', '2026-12-01T10:00')).toEqual({ to: 'To is not after from.' });
    expect(customWindowErrors('2026-12-01T10:00', '2026-12-01T10:00')).toEqual({ to: 'To is not after from.' });
    expect(customWindowErrors('2026-12-01T10:00', '2026-12-01T11:00')).toEqual({});
  });
  it('lets empty fields be', () => {
    expect(customWindowErrors('', '')).toEqual({});
  });
});
