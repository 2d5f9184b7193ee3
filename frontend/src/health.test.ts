import { DEFAULT_THEME, isLightColor, mergeMantineTheme } from '@mantine/core';
import { describe, expect, it } from 'vitest';
import { relativeTime } from './format';
import {
  clockTime,
  countersText,
  failureCause,
  HEALTH_STATES,
  healthColor,
  healthColors,
  healthLabel,
  healthText,
  healthTimes,
  healthWords,
  successOf,
  troubled,
} from './health';
import { AA, contrast, LUMINANCE_THRESHOLD, PRIMARY_SHADE, theme } from './theme';

const now = new Date('2026-12-02T20:20:00Z');
const rel = (t: string) => relativeTime(t, now);
const utc = { locale: 'en-GB', timeZone: 'UTC' };

describe('health badge', () => {
  it.each([
    ['HEALTHY', 'green'],
    ['RETRYING', 'yellow'],
    ['FAILING', 'red'],
    ['FAILED', 'red'],
    ['DEAD_LETTERING', 'orange'],
    ['PAUSED', 'gray'],
    ['STOPPED', 'gray'],
    ['PENDING', 'blue'],
    ['SOMETHING_NEW', 'gray'],
    [undefined, 'gray'],
  ])('%s is %s', (h, color) => {
    expect(healthColor(h)).toBe(color);
  });

  it('writes the state, with spaces, and UNKNOWN for none', () => {
    expect(healthLabel('DEAD_LETTERING')).toBe('DEAD LETTERING');
    expect(healthLabel('HEALTHY')).toBe('HEALTHY');
    expect(healthLabel(undefined)).toBe('UNKNOWN');
  });

  it('explains every state, and says an unknown one as it is', () => {
    for (const h of HEALTH_STATES) expect(healthWords(h)).toMatch(/^[A-Z][a-z-]+: .+\.$/);
    expect(healthWords('NEW_STATE')).toBe('NEW_STATE');
    expect(healthWords(undefined)).toBe('The API reports no health.');
  });

  // The badge is filled: the theme's autoContrast writes black on a colour it calls light, else white. axe-core
  // checks the same in the end-to-end test, in light and in dark mode.
  it.each(HEALTH_STATES)('%s has readable text on its colour in both schemes', (h) => {
    const t = mergeMantineTheme(DEFAULT_THEME, theme);
    for (const shade of [PRIMARY_SHADE.light, PRIMARY_SHADE.dark]) {
      const bg = t.colors[healthColors[h]][shade];
      const fg = isLightColor(bg, LUMINANCE_THRESHOLD) ? t.black : t.white;
      expect(contrast(fg, bg), `${fg} on ${bg}`).toBeGreaterThanOrEqual(AA);
    }
  });

  it('calls retrying, failing, dead-lettering and failed troubled', () => {
    expect(HEALTH_STATES.filter(troubled)).toEqual(['RETRYING', 'DEAD_LETTERING', 'FAILING', 'FAILED']);
  });
});

describe('failureCause', () => {
  it.each([
    ['connection-refused', undefined, 'connection refused'],
    ['http-5xx', 503, 'HTTP 503'],
    ['http-4xx', undefined, 'an HTTP 4xx answer'],
    ['refused', 302, 'refused (HTTP 302)'],
    ['egress-refused', undefined, 'refused by the egress guard'],
    ['error', undefined, 'boom'],
    [undefined, undefined, 'boom'],
  ])('%s %s: %s', (errorClass, httpStatus, want) => {
    expect(failureCause({ errorClass, httpStatus, message: 'boom' })).toBe(want);
  });
  it('says "an error" when it knows nothing', () => {
    expect(failureCause({})).toBe('an error');
  });
});

describe('successOf', () => {
  const failure = { at: '2026-12-02T20:18:00Z', attempt: 3 };
  it.each([
    ['a success before the failure', { lastFailure: failure, lastSuccessAt: '2026-12-02T20:10:00Z' }, { kind: 'none-since', at: '2026-12-02T20:10:00Z' }],
    ['no success at all', { lastFailure: failure }, { kind: 'never' }],
    ['a success after the failure', { lastFailure: failure, lastSuccessAt: '2026-12-02T20:19:00Z' }, { kind: 'recovered', at: '2026-12-02T20:19:00Z' }],
    ['no failure', { lastSuccessAt: '2026-12-02T20:19:00Z' }, { kind: 'last', at: '2026-12-02T20:19:00Z' }],
    ['neither', {}, undefined],
  ])('%s', (_, facts, want) => {
    expect(successOf(facts)).toEqual(want);
  });
});

describe('healthText', () => {
  it.each([
    [
      'failing after a success',
      { lastFailure: { at: '2026-12-02T20:18:00Z', attempt: 3, errorClass: 'connection-refused' }, lastSuccessAt: '2026-12-02T20:02:11Z' },
      'Last failure 2 min ago (attempt 3): connection refused; no success since 20:02:11',
    ],
    [
      'failing since the task started',
      { lastFailure: { at: '2026-12-02T20:19:50Z', attempt: 1, errorClass: 'http-5xx', httpStatus: 503 } },
      'Last failure 10 s ago (attempt 1): HTTP 503; no success since the task started',
    ],
    [
      'recovered',
      { lastFailure: { at: '2026-12-02T19:20:00Z', attempt: 2, errorClass: 'timeout' }, lastSuccessAt: '2026-12-02T20:19:30Z' },
      'Last failure 1 h ago (attempt 2): no answer in time; delivering again, last success 30 s ago',
    ],
    ['a source (no attempt)', { lastFailure: { at: '2026-12-02T20:19:00Z', errorClass: 'dns' } }, 'Last failure 1 min ago: the name does not resolve; no success since the task started'],
    ['only successes', { lastSuccessAt: '2026-12-02T20:19:00Z' }, 'Last success 1 min ago'],
    ['a failed task', { lastError: 'task panicked' }, 'Last error: task panicked'],
    ['nothing yet', {}, 'No delivery yet'],
  ])('%s', (_, facts, want) => {
    expect(healthText(facts, now, rel, utc)).toBe(want);
  });
});

describe('healthTimes', () => {
  const exact = (t: string) => `<${t}>`;
  it('gives the exact times of the last failure and success', () => {
    expect(healthTimes({ lastFailure: { at: 'f' }, lastSuccessAt: 's' }, exact)).toBe('Last failure: <f>. Last success: <s>.');
    expect(healthTimes({ lastSuccessAt: 's' }, exact)).toBe('Last success: <s>.');
    expect(healthTimes({}, exact)).toBe('');
  });
  it('says what an idle source did with its own words', () => {
    expect(healthText({}, now, rel, { idle: 'Nothing stored yet' })).toBe('Nothing stored yet');
  });
});

describe('clockTime', () => {
  it('writes the time alone today, with the day another day', () => {
    expect(clockTime('2026-12-02T09:05:07Z', now, utc)).toBe('09:05:07');
    expect(clockTime('2026-11-30T09:05:07Z', now, utc)).toBe('30 Nov, 09:05');
    expect(clockTime('not a time', now, utc)).toBe('not a time');
  });
});

describe('countersText', () => {
  it('writes the counters that are not 0, in order', () => {
    expect(countersText({ deadLettered: 1, read: 3, delivered: 2, retried: 0 })).toBe('read 3 · delivered 2 · dead-lettered 1');
    expect(countersText({ read: 5, written: 4, failed: 1 })).toBe('read 5 · written 4 · failed 1');
  });
  it('says when there is nothing to count', () => {
    expect(countersText({ read: 0 })).toBe('nothing yet');
    expect(countersText(undefined)).toBe('no counters yet');
  });
});
