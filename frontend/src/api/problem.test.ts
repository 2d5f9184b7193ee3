import { describe, expect, it } from 'vitest';
import { ApiError, errorText, problemText } from './problem';

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
