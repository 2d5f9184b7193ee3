/**
 * A parser of Server-Sent Events (the text/event-stream format of the HTML standard, "Interpreting an event
 * stream") for a stream read with fetch(): the browser's EventSource cannot send the headers the console
 * authenticates with (X-Account-Id, an API key), so the live tail reads the body itself and feeds its text here.
 * Pure: no I/O; chunks may be cut anywhere, even between the CR and the LF of a line's end.
 */

/** SseEvent is one event of the stream, dispatched at the blank line that ends it. */
export interface SseEvent {
  /** type is the event's "event" field; "message" when it has none. */
  type: string;
  /** data is the event's "data" lines joined with "\n". */
  data: string;
  /** id is the last event ID: the stream's last "id" field so far, which later events keep until another one. */
  id: string;
  /** retry is the reconnection time (ms) the event's "retry" field asked for, when it had one. */
  retry?: number;
}

/** SseParser turns the text of a stream, chunk by chunk, into events. */
export interface SseParser {
  /**
   * push reads the next chunk of text and returns the events it completes, in order. An event still open when the
   * stream ends (no blank line after it) is never returned: the standard discards it.
   */
  push(chunk: string): SseEvent[];
}

/** sseParser returns a parser at the start of a stream. */
export function sseParser(): SseParser {
  let buffer = ''; // the text of the line not ended yet
  let started = false; // whether the stream's first character (a byte order mark to drop) was seen
  let afterCR = false; // the last chunk ended with a CR: an LF starting the next one ends no line of its own
  let type = '';
  let data: string[] = [];
  let id = '';
  let retry: number | undefined;

  function line(l: string, out: SseEvent[]) {
    if (l === '') {
      // A blank line dispatches; without data there is nothing to dispatch, and the event's type is forgotten.
      if (data.length > 0) out.push({ type: type || 'message', data: data.join('\n'), id, ...(retry !== undefined && { retry }) });
      type = '';
      data = [];
      retry = undefined;
      return;
    }
    if (l.startsWith(':')) return; // a comment: keep-alives
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        type = value;
        break;
      case 'data':
        data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) id = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) retry = Number(value);
        break;
      // Other fields are ignored, as the standard says.
    }
  }

  return {
    push(chunk) {
      let text = chunk;
      if (!started && text.length > 0) {
        started = true;
        if (text.startsWith('\uFEFF')) text = text.slice(1);
      }
      if (afterCR && text.startsWith('\n')) text = text.slice(1);
      if (chunk.length > 0) afterCR = text.endsWith('\r');
      buffer += text;
      const out: SseEvent[] = [];
      const ends = /\r\n|\r|\n/g;
      let from = 0;
      let m: RegExpExecArray | null;
      while ((m = ends.exec(buffer))) {
        // A CR at the very end may be the first half of a CRLF: the line ends there either way, and afterCR drops
        // the LF if the next chunk starts with it.
        line(buffer.slice(from, m.index), out);
        from = m.index + m[0].length;
      }
      buffer = buffer.slice(from);
      return out;
    },
  };
}
