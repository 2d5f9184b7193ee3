import { describe, expect, it } from 'vitest';
import { bytesText, durationText, exactTime, fieldLabel, goDurationText, parseGoDuration, relativeTime, retentionText } from './format';

describe('parseGoDuration', () => {
  it.each([
    ['72h0m0s', 72 * 3_600_000],
    ['1h30m0s', 5_400_000],
    ['500ms', 500],
    ['1.5h', 5_400_000],
    ['.5s', 500],
    ['1m30.25s', 90_250],
    ['300us', 0.3],
    ['300µs', 0.3],
    ['2ns', 0.000002],
    ['0s', 0],
    ['0', 0],
    ['-2m', -120_000],
    ['+1s', 1000],
    [' 8760h ', 8760 * 3_600_000],
  ])('%s is %d ms', (s, want) => {
    expect(parseGoDuration(s)).toBeCloseTo(want, 9);
  });

  it.each([[''], ['72'], ['h'], ['1d'], ['1h 30m'], ['.h'], ['1hh'], ['abc'], ['-'], [undefined]])('%s is not a duration', (s) => {
    expect(parseGoDuration(s)).toBeUndefined();
  });
});

describe('durationText', () => {
  it.each([
    [0, '0 s'],
    [0.3, '0.3 ms'],
    [500, '500 ms'],
    [1000, '1 s'],
    [1500, '1.5 s'],
    [59_000, '59 s'],
    [60_000, '1 min'],
    [125_000, '2 min 5 s'],
    [3_600_000, '1 h'],
    [5_400_000, '1 h 30 min'],
    [86_400_000, '1 day'],
    [72 * 3_600_000, '3 days'],
    [36 * 3_600_000, '1 day 12 h'],
    [8760 * 3_600_000, '365 days'],
    // More than three units: the smallest are left out.
    [86_400_000 + 3_600_000 + 60_000 + 1000, '1 day 1 h 1 min'],
    [-120_000, '−2 min'],
  ])('%d ms reads %s', (ms, want) => {
    expect(durationText(ms)).toBe(want);
  });
});

describe('goDurationText', () => {
  it.each([
    ['72h0m0s', '3 days'],
    ['1h30m0s', '1 h 30 min'],
    ['500ms', '500 ms'],
    ['24h0m0s', '1 day'],
    ['10m0s', '10 min'],
    ['0s', '0 s'],
    ['forever', 'forever'],
    ['', ''],
    [undefined, ''],
  ])('%s reads %s', (s, want) => {
    expect(goDurationText(s)).toBe(want);
  });
});

describe('bytesText', () => {
  it.each([
    [0, '0 bytes'],
    [1, '1 byte'],
    [1023, '1023 bytes'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [1_048_576, '1 MiB'],
    [1_073_741_824, '1 GiB'],
    [5 * 1_073_741_824, '5 GiB'],
    [1_610_612_736, '1.5 GiB'],
    // Just under a unit: rounded up into the next one, never "1024 MiB".
    [1_073_741_823, '1 GiB'],
    [1_048_575, '1 MiB'],
    [1_099_511_627_776, '1 TiB'],
    [-2048, '−2 KiB'],
    [undefined, ''],
    [Number.NaN, ''],
  ])('%d reads %s', (n, want) => {
    expect(bytesText(n)).toBe(want);
  });
});

describe('retentionText', () => {
  it.each([
    [{ maxAge: '72h0m0s', maxBytes: 1_073_741_824 }, '3 days or 1 GiB, whichever comes first'],
    [{ maxAge: '72h0m0s' }, '3 days'],
    [{ maxAge: '72h0m0s', maxBytes: 0 }, '3 days'],
    [{ maxBytes: 1_048_576 }, '1 MiB'],
    [{}, ''],
    [undefined, ''],
  ])('%j reads %s', (r, want) => {
    expect(retentionText(r)).toBe(want);
  });
});

describe('relativeTime', () => {
  const now = new Date('2026-11-30T12:00:00.000Z');
  it.each([
    ['2026-11-30T12:00:00Z', 'just now'],
    ['2026-11-30T11:59:57.5Z', 'just now'],
    ['2026-11-30T12:00:03Z', 'just now'],
    ['2026-11-30T11:59:48Z', '12 s ago'],
    ['2026-11-30T11:57:00.123456Z', '2 min ago'],
    ['2026-11-30T11:57:00Z', '3 min ago'],
    ['2026-11-30T09:00:00Z', '3 h ago'],
    ['2026-11-29T12:00:00Z', '1 day ago'],
    ['2026-11-25T11:00:00Z', '5 days ago'],
    ['2026-09-01T12:00:00Z', '3 months ago'],
    ['2024-11-30T12:00:00Z', '2 years ago'],
    ['2026-11-30T12:03:00Z', 'in 3 min'],
    ['2026-11-30T20:00:00Z', 'in 8 h'],
    ['2026-12-02T12:00:00Z', 'in 2 days'],
    ['2026-11-30T13:00:00+01:00', 'just now'],
    ['not a time', 'not a time'],
    ['', ''],
    [undefined, ''],
  ])('%s reads %s', (t, want) => {
    expect(relativeTime(t, now)).toBe(want);
  });
});

describe('exactTime', () => {
  it('writes the time to the second with its zone', () => {
    expect(exactTime('2026-11-30T12:00:05.123456Z', { locale: 'en-GB', timeZone: 'UTC' })).toBe('30 Nov 2026, 12:00:05 UTC');
  });
  it('writes it in the zone asked for', () => {
    expect(exactTime('2026-11-30T12:00:05Z', { locale: 'en-GB', timeZone: 'Asia/Tokyo' })).toBe('30 Nov 2026, 21:00:05 GMT+9');
  });
  it.each([
    [undefined, ''],
    ['', ''],
    ['yesterday', 'yesterday'],
  ])('%s reads %s', (t, want) => {
    expect(exactTime(t)).toBe(want);
  });
});

describe('fieldLabel', () => {
  it.each([
    ['url', 'URL'],
    ['method', 'Method'],
    ['auth.oauth.client_id', 'Auth OAuth client ID'],
    ['auth.api_key.header', 'Auth API key header'],
    ['schedule.cron', 'Schedule cron'],
    ['maxRetries', 'Max retries'],
    ['retry-after', 'Retry after'],
    ['tls.ca', 'TLS CA'],
    ['Topic', 'Topic'],
  ])('%s reads %s', (k, want) => {
    expect(fieldLabel(k)).toBe(want);
  });
});
