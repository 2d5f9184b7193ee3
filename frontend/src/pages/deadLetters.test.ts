import { describe, expect, it } from 'vitest';
import { entryText, findDeadLetter, prettyEvent } from './deadLetters';

const pages: Record<string, { deadLetters: { id: string }[]; nextToken?: string }> = {
  '': { deadLetters: [{ id: '1' }, { id: '2' }], nextToken: 'b' },
  b: { deadLetters: [], nextToken: 'c' },
  c: { deadLetters: [{ id: '7' }] },
};

describe('findDeadLetter', () => {
  const seen: (string | undefined)[] = [];
  const load = async (t: string | undefined) => {
    seen.push(t);
    return pages[t ?? ''];
  };

  it('follows nextToken across empty pages until the id is found', async () => {
    expect(await findDeadLetter(load, '7')).toEqual({ id: '7' });
    expect(seen).toEqual([undefined, 'b', 'c']);
  });

  it('answers undefined after the last page, or after maxPages', async () => {
    expect(await findDeadLetter(load, '9')).toBeUndefined();
    expect(await findDeadLetter(load, '7', 2)).toBeUndefined();
  });
});

describe('dead letter texts', () => {
  it('pretty-prints the event', () => {
    expect(prettyEvent({ id: 'e1', data: { a: 1 } })).toBe('{\n  "id": "e1",\n  "data": {\n    "a": 1\n  }\n}');
    expect(prettyEvent(undefined)).toBe('');
  });

  it('says what happened to each entry', () => {
    expect(entryText({ id: '42' }, 'redriven')).toBe('Dead letter 42 was redriven.');
    expect(entryText({ id: '42', errorCode: 'TargetNotFound', errorMessage: 'target "hook" no longer exists' }, 'redriven')).toBe(
      'Dead letter 42 was not redriven: target "hook" no longer exists.',
    );
  });
});
