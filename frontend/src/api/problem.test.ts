import { describe, expect, it } from 'vitest';
import { ApiError, errorText, parseRetryAfter, problemText, waitText } from './problem';

describe('problemText', () => {
  it.each([
    { name: 'detail as a sentence', p: { detail: 'bus "orders" does not exist', status: 404 }, want: 'Bus "orders" does not exist.' },
    { name: 'field appended when the detail does not name it', p: { detail: 'must be an absolute URL', field: 'config.url' }, want: 'Must be an absolute URL (field: config.url).' },
    { name: 'field not repeated', p: { detail: 'config.url: must be absolute', field: 'config.url' }, want: 'config.url: must be absolute.' },
    { name: 'status words without detail', p: { status: 503 }, want: 'The service is unavailable; try again shortly.' },
    { name: 'title when the status is unknown', p: { title: "I'm a teapot", status: 418 }, want: "I'm a teapot." },
    { name: 'nothing known', p: {}, want: 'Something went wrong.' },
  ])('$name', ({ p, want }) => {
    expect(problemText(p)).toBe(want);
  });

  it('uses the HTTP status when the document has none', () => {
    expect(problemText({}, 404)).toBe('It does not exist.');
  });
});

describe('errorText', () => {
  it('renders an ApiError by its problem', () => {
    expect(errorText(new ApiError(400, { detail: 'name is required', field: 'name' }))).toBe('Name is required.');
  });
  it('says the server cannot be reached on a network error', () => {
    expect(errorText(new TypeError('Failed to fetch'))).toBe('The server cannot be reached: Failed to fetch.');
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it.each([
    { name: 'seconds', v: '4', want: 4 },
    { name: 'zero', v: '0', want: 0 },
    { name: 'spaces', v: ' 120 ', want: 120 },
    { name: 'an HTTP date', v: 'Sun, 01 Mar 2026 12:00:30 GMT', want: 30 },
    { name: 'a date in the past', v: 'Sun, 01 Mar 2026 11:00:00 GMT', want: 0 },
    { name: 'none', v: null, want: undefined },
    { name: 'empty', v: '', want: undefined },
    { name: 'nonsense', v: 'soon', want: undefined },
    { name: 'negative', v: '-3', want: undefined },
  ])('$name', ({ v, want }) => {
    expect(parseRetryAfter(v, now)).toBe(want);
  });
});

describe('waitText', () => {
  it.each([
    { s: 0, want: '1 second' },
    { s: 1, want: '1 second' },
    { s: 1.2, want: '2 seconds' },
    { s: 45, want: '45 seconds' },
    { s: 60, want: '1 minute' },
    { s: 90, want: '1 minute 30 seconds' },
    { s: 300, want: '5 minutes' },
    { s: 121, want: '2 minutes 1 second' },
  ])('$s s is $want', ({ s, want }) => {
    expect(waitText(s)).toBe(want);
  });
});
