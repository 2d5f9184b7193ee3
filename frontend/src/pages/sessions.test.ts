import { describe, expect, it } from 'vitest';
import { browserOf, endsAt } from './sessions';

describe('browserOf', () => {
  it.each([
    { name: 'Firefox on Linux', ua: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', want: 'Firefox 128 on Linux' },
    { name: 'Chrome on Windows', ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36', want: 'Chrome 140 on Windows' },
    { name: 'Edge, which also says Chrome', ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 Edg/140.0.3485.54', want: 'Edge 140 on Windows' },
    { name: 'Safari on macOS', ua: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15', want: 'Safari 18 on macOS' },
    { name: 'Safari on an iPhone', ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1', want: 'Safari 18 on iOS' },
    { name: 'Chrome on Android (also Linux)', ua: 'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Mobile Safari/537.36', want: 'Chrome 140 on Android' },
    { name: 'headless Chrome', ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36', want: 'Headless Chrome 140 on Linux' },
    { name: 'curl', ua: 'curl/8.14.1', want: 'curl 8.14.1' },
    { name: 'unknown, short', ua: 'my-script', want: 'my-script' },
    { name: 'unknown, long', ua: 'x'.repeat(80), want: 'x'.repeat(59) + '…' },
    { name: 'empty', ua: '', want: 'unknown' },
    { name: 'none', ua: undefined, want: 'unknown' },
  ])('$name', ({ ua, want }) => {
    expect(browserOf(ua)).toBe(want);
  });
});

describe('endsAt', () => {
  it.each([
    { name: 'idle end first', s: { idleExpiresAt: '2026-03-01T13:00:00Z', expiresAt: '2026-03-01T23:00:00Z' }, want: '2026-03-01T13:00:00Z' },
    { name: 'absolute end first', s: { idleExpiresAt: '2026-03-01T13:00:00Z', expiresAt: '2026-03-01T12:30:00Z' }, want: '2026-03-01T12:30:00Z' },
    { name: 'one of them', s: { expiresAt: '2026-03-01T12:30:00Z' }, want: '2026-03-01T12:30:00Z' },
    { name: 'an unreadable one is left out', s: { idleExpiresAt: 'soon', expiresAt: '2026-03-01T12:30:00Z' }, want: '2026-03-01T12:30:00Z' },
    { name: 'none', s: {}, want: undefined },
  ])('$name', ({ s, want }) => {
    expect(endsAt(s)).toBe(want);
  });
});
