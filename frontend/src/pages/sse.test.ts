import { describe, expect, it } from 'vitest';
import { sseParser, type SseEvent } from './sse';

/** parse feeds chunks to a new parser and returns every event they complete. */
function parse(...chunks: string[]): SseEvent[] {
  const p = sseParser();
  return chunks.flatMap((c) => p.push(c));
}

// What the control plane's tail writes (web/rest/inspect.go tailEvents), keep-alive comment included.
const tail =
  'event: ready\ndata: {}\n\n' +
  ': keep-alive\n\n' +
  'event: event\nid: 8\ndata: {"sequence":8,"storedAt":"2026-12-01T09:15:00.002Z","event":{"id":"42"}}\n\n' +
  'event: skipped\ndata: {"skipped":12}\n\n' +
  'event: event\nid: 21\ndata: {"sequence":21}\n\n';

const tailEvents: SseEvent[] = [
  { type: 'ready', data: '{}', id: '' },
  { type: 'event', data: '{"sequence":8,"storedAt":"2026-12-01T09:15:00.002Z","event":{"id":"42"}}', id: '8' },
  // The last event ID stays until another id field: a skipped event has none of its own.
  { type: 'skipped', data: '{"skipped":12}', id: '8' },
  { type: 'event', data: '{"sequence":21}', id: '21' },
];

describe('sseParser', () => {
  it('reads the tail’s events, their types, ids and data, and skips comments', () => {
    expect(parse(tail)).toEqual(tailEvents);
  });

  it('gives the same events wherever the stream is cut in two', () => {
    for (let i = 0; i <= tail.length; i++) {
      expect(parse(tail.slice(0, i), tail.slice(i)), `cut at ${i}`).toEqual(tailEvents);
    }
  });

  it('gives the same events when the stream comes one character at a time', () => {
    expect(parse(...tail.split(''))).toEqual(tailEvents);
  });

  it.each([
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('reads lines ended by %s, cut anywhere', (_, eol) => {
    const text = tail.replaceAll('\n', eol);
    expect(parse(text)).toEqual(tailEvents);
    for (let i = 0; i <= text.length; i++) expect(parse(text.slice(0, i), text.slice(i)), `cut at ${i}`).toEqual(tailEvents);
  });

  it('takes a CR and the LF in the next chunk as one line end, and an LF after it as a blank line', () => {
    expect(parse('data: a\r', '\n', '\n')).toEqual([{ type: 'message', data: 'a', id: '' }]);
    expect(parse('data: a\r', '', '\ndata: b\r\n\r\n')).toEqual([{ type: 'message', data: 'a\nb', id: '' }]);
  });

  it('joins the data lines of one event with a line feed', () => {
    expect(parse('data: {\ndata:   "a": 1\ndata: }\n\n')).toEqual([{ type: 'message', data: '{\n  "a": 1\n}', id: '' }]);
  });

  it('drops one space after the colon only, and takes a field without a colon as empty', () => {
    expect(parse('data:x\n\n', 'data:  y\n\n', 'data\ndata\n\n')).toEqual([
      { type: 'message', data: 'x', id: '' },
      { type: 'message', data: ' y', id: '' },
      { type: 'message', data: '\n', id: '' },
    ]);
  });

  it('does not dispatch an event without data, and forgets its type', () => {
    expect(parse('event: ready\n\n', 'data: x\n\n')).toEqual([{ type: 'message', data: 'x', id: '' }]);
  });

  it('does not dispatch a last event the stream ends without a blank line after', () => {
    const p = sseParser();
    expect(p.push('event: event\nid: 3\ndata: {"sequence":3}\n')).toEqual([]);
    expect(p.push('')).toEqual([]);
  });

  it('ignores an id holding NUL and unknown fields, and reads retry as digits only', () => {
    expect(parse('id: 5\n', 'id: a\0b\n', 'foo: bar\nretry: 3000\ndata: x\n\n', 'retry: 1s\ndata: y\n\n')).toEqual([
      { type: 'message', data: 'x', id: '5', retry: 3000 },
      { type: 'message', data: 'y', id: '5' },
    ]);
  });

  it('drops a byte order mark at the start of the stream only', () => {
    expect(parse('\uFEFFdata: x\n\n', '\uFEFFdata: y\n\n')).toEqual([{ type: 'message', data: 'x', id: '' }]);
  });
});
