import { describe, expect, it } from 'vitest';
import { COALESCE_MS, emptyHistory, MAX_STEPS, record, redo, undo, type History } from './history';

// The states are numbers: the history does not look into them.
function edits(...steps: [number, string | undefined, number][]): History<number> {
  let h = emptyHistory<number>();
  for (const [before, key, at] of steps) h = record(h, before, key, at);
  return h;
}

describe('history', () => {
  it('undoes to the state before the last change and redoes it', () => {
    const h = edits([1, undefined, 0], [2, undefined, 10]);
    const u = undo(h, 3)!;
    expect(u.state).toBe(2);
    const u2 = undo(u.history, 2)!;
    expect(u2.state).toBe(1);
    expect(undo(u2.history, 1)).toBeUndefined();
    const r = redo(u2.history, 1)!;
    expect(r.state).toBe(2);
    expect(redo(r.history, 2)!.state).toBe(3);
  });

  it('has nothing to undo or redo when empty', () => {
    expect(undo(emptyHistory<number>(), 1)).toBeUndefined();
    expect(redo(emptyHistory<number>(), 1)).toBeUndefined();
  });

  it('forgets what was undone once a new change is made', () => {
    const h = edits([1, undefined, 0]);
    const u = undo(h, 2)!;
    const h2 = record(u.history, 1, undefined, 100);
    expect(redo(h2, 5)).toBeUndefined();
    expect(h2.past).toEqual([1]);
  });

  it('makes one step of quick changes with the same key', () => {
    const h = edits([1, 'data:a', 0], [2, 'data:a', COALESCE_MS - 1], [3, 'data:a', 2 * COALESCE_MS - 2]);
    expect(h.past).toEqual([1]);
    expect(undo(h, 4)!.state).toBe(1);
  });

  it('makes a step of a change after a pause, or of another key, or without key', () => {
    expect(edits([1, 'data:a', 0], [2, 'data:a', COALESCE_MS]).past).toEqual([1, 2]);
    expect(edits([1, 'data:a', 0], [2, 'data:b', 1]).past).toEqual([1, 2]);
    expect(edits([1, undefined, 0], [2, undefined, 1]).past).toEqual([1, 2]);
  });

  it('starts a new step after an undo, even with the same key', () => {
    const h = edits([1, 'data:a', 0], [2, 'data:a', 100]);
    const u = undo(h, 3)!;
    expect(record(u.history, 1, 'data:a', 200).past).toEqual([1]);
    expect(record(record(u.history, 1, 'data:a', 200), 5, 'data:a', 300).past).toEqual([1]);
  });

  it(`keeps the last ${MAX_STEPS} steps`, () => {
    let h = emptyHistory<number>();
    for (let i = 0; i < MAX_STEPS + 20; i++) h = record(h, i, undefined, i);
    expect(h.past.length).toBe(MAX_STEPS);
    expect(h.past[0]).toBe(20);
  });
});
