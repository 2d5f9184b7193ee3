import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COALESCE_MS } from './history';
import { shownErrors, showsErrors, useBuilder } from './store';
import type { BuilderNode, NodeData, TargetData } from './types';

const node = (id: string, data: NodeData, x = 0): BuilderNode => ({ id, type: data.kind, position: { x, y: 0 }, data });
const target: TargetData = { kind: 'target', targetType: 'http', plugin: false, name: '', config: {} };

const st = () => useBuilder.getState();
const ids = () => st().nodes.map((n) => n.id);

// bus → filter → target, loaded as a saved channel is.
function loadChannel() {
  st().load(
    {
      nodes: [node('bus', { kind: 'bus', name: 'orders' }, 0), node('filter', { kind: 'filter', pattern: '{"type": ["a"]}' }, 260), node('target:hook', { ...target, name: 'hook' }, 520)],
      edges: [
        { id: 'bus->filter', source: 'bus', target: 'filter' },
        { id: 'filter->target:hook', source: 'filter', target: 'target:hook' },
      ],
    },
    'created',
    '',
    true,
  );
}

let now = 1_000_000;
const later = (ms: number) => (now += ms);

beforeEach(() => {
  vi.spyOn(Date, 'now').mockImplementation(() => now);
  loadChannel();
});
afterEach(() => vi.restoreAllMocks());

describe('undo and redo in the builder', () => {
  it('starts with nothing to undo after a load', () => {
    expect([st().canUndo, st().canRedo]).toEqual([false, false]);
  });

  it('undoes and redoes adding a node', () => {
    const id = st().addNode(target, { x: 10, y: 10 });
    expect(ids()).toContain(id);
    expect(st().selected).toBe(id);
    expect(st().canUndo).toBe(true);
    st().undo();
    expect(ids()).not.toContain(id);
    expect(st().selected).toBeUndefined();
    expect([st().canUndo, st().canRedo]).toEqual([false, true]);
    st().redo();
    expect(ids()).toContain(id);
    expect([st().canUndo, st().canRedo]).toEqual([true, false]);
  });

  it('brings a deleted node back with its edges in one step', () => {
    // As React Flow deletes a node: its edges first, then the node.
    st().onEdgesChange([{ type: 'remove', id: 'filter->target:hook' }]);
    st().onNodesChange([{ type: 'remove', id: 'target:hook' }]);
    expect(ids()).toEqual(['bus', 'filter']);
    expect(st().edges.map((e) => e.id)).toEqual(['bus->filter']);
    st().undo();
    expect(ids()).toEqual(['bus', 'filter', 'target:hook']);
    expect(st().edges.map((e) => e.id)).toEqual(['bus->filter', 'filter->target:hook']);
    expect(st().canUndo).toBe(false);
  });

  it('undoes a word typed into a field in one step', () => {
    for (const name of ['h', 'ho', 'hoo', 'hook2']) {
      later(COALESCE_MS / 3);
      st().update('bus', { name });
    }
    expect((st().nodes[0].data as { name: string }).name).toBe('hook2');
    st().undo();
    expect((st().nodes[0].data as { name: string }).name).toBe('orders');
    expect(st().canUndo).toBe(false);
  });

  it('makes a step of an edit after a pause, and of an edit of another node', () => {
    st().update('bus', { name: 'a' });
    later(COALESCE_MS + 1);
    st().update('bus', { name: 'ab' });
    later(10);
    st().update('filter', { pattern: '{}' });
    st().undo();
    expect((st().nodes[1].data as { pattern: string }).pattern).toBe('{"type": ["a"]}');
    expect((st().nodes[0].data as { name: string }).name).toBe('ab');
    st().undo();
    expect((st().nodes[0].data as { name: string }).name).toBe('a');
    st().undo();
    expect((st().nodes[0].data as { name: string }).name).toBe('orders');
  });

  it('undoes a drag of a node in one step, to where it was before the drag', () => {
    for (const x of [10, 20, 30]) st().onNodesChange([{ type: 'position', id: 'bus', position: { x, y: 5 }, dragging: true }]);
    expect(st().canUndo).toBe(false);
    st().onNodesChange([{ type: 'position', id: 'bus', position: { x: 40, y: 5 }, dragging: false }]);
    expect(st().nodes[0].position).toEqual({ x: 40, y: 5 });
    st().undo();
    expect(st().nodes[0].position).toEqual({ x: 0, y: 0 });
    expect(st().canUndo).toBe(false);
    st().redo();
    expect(st().nodes[0].position).toEqual({ x: 40, y: 5 });
  });

  it('undoes a run of arrow-key moves in one step', () => {
    for (const x of [5, 10, 15]) {
      later(100);
      st().onNodesChange([{ type: 'position', id: 'bus', position: { x, y: 0 }, dragging: false }]);
    }
    st().undo();
    expect(st().nodes[0].position).toEqual({ x: 0, y: 0 });
  });

  it('records neither selections nor sizes', () => {
    st().onNodesChange([{ type: 'select', id: 'bus', selected: true }]);
    st().onNodesChange([{ type: 'dimensions', id: 'bus', dimensions: { width: 200, height: 120 } }]);
    st().onEdgesChange([{ type: 'select', id: 'bus->filter', selected: true }]);
    expect(st().canUndo).toBe(false);
  });

  it('undoes a connection, the rule name and a tidy-up', () => {
    st().onConnect({ source: 'bus', target: 'target:hook', sourceHandle: null, targetHandle: null });
    expect(st().edges).toHaveLength(3);
    later(1000);
    st().setRule('c', '');
    later(100);
    st().setRule('cr', '');
    later(1000);
    st().arrange({ bus: { x: 99, y: 99 } });
    st().undo();
    expect(st().nodes[0].position).toEqual({ x: 0, y: 0 });
    st().undo();
    expect(st().ruleName).toBe('created');
    st().undo();
    expect(st().edges).toHaveLength(2);
  });

  it('makes no step of a connection made already', () => {
    st().onConnect({ source: 'bus', target: 'filter', sourceHandle: null, targetHandle: null });
    expect(st().edges).toHaveLength(2);
    expect(st().canUndo).toBe(false);
  });

  it('clears the history on load', () => {
    st().addNode(target, { x: 0, y: 0 });
    loadChannel();
    expect([st().canUndo, st().canRedo]).toEqual([false, false]);
    st().undo();
    expect(ids()).toEqual(['bus', 'filter', 'target:hook']);
  });
});

describe('selection in the builder', () => {
  it('follows React Flow: Enter on a focused node selects it', () => {
    st().onNodesChange([{ type: 'select', id: 'filter', selected: true }]);
    expect(st().selected).toBe('filter');
    st().onNodesChange([{ type: 'select', id: 'filter', selected: false }]);
    expect(st().selected).toBeUndefined();
  });

  it('selects a node added, on the canvas too', () => {
    st().onNodesChange([{ type: 'select', id: 'bus', selected: true }]);
    const id = st().addNode(target, { x: 0, y: 0 });
    expect(st().nodes.filter((n) => n.selected).map((n) => n.id)).toEqual([id]);
  });
});

describe('errors shown in the builder', () => {
  const errs = { '': ['drop a target'], bus: ['bus name is required'], filter: ['event pattern is empty'], 'target:hook': ['url is required'] };

  it('shows nothing before the user did anything', () => {
    st().setGraphErrors(errs);
    st().addNode(target, { x: 0, y: 0 });
    st().onNodesChange([{ type: 'position', id: 'bus', position: { x: 1, y: 1 }, dragging: false }]);
    expect(shownErrors(st())).toEqual({});
  });

  it('shows the errors of the nodes edited or connected', () => {
    st().setGraphErrors(errs);
    st().update('filter', { pattern: '' });
    expect(shownErrors(st())).toEqual({ filter: ['event pattern is empty'] });
    st().onConnect({ source: 'bus', target: 'target:hook', sourceHandle: null, targetHandle: null });
    expect(Object.keys(shownErrors(st())).sort()).toEqual(['bus', 'filter', 'target:hook']);
    expect(showsErrors(st(), '')).toBe(false);
  });

  it('does not count defaults filled in as an edit', () => {
    st().fillDefaults('target:hook', { method: 'POST' });
    expect(showsErrors(st(), 'target:hook')).toBe(false);
    expect(st().canUndo).toBe(false);
  });

  it('shows every error once a save was attempted, until the next load', () => {
    st().setGraphErrors(errs);
    st().attemptSave();
    expect(shownErrors(st())).toEqual(errs);
    loadChannel();
    expect([st().attempted, st().touched.size]).toEqual([false, 0]);
  });
});

describe("the server's problems in the builder", () => {
  const problems = {
    '': [{ message: 'name differs', field: 'name' }, { message: 'a rule has at most 5 targets' }],
    filter: [{ message: 'invalid eventPattern', field: 'pattern' }],
    'target:hook': [{ message: 'config.url: not a URL', config: 'url' }],
  };

  it('marks the nodes they are on touched, and goes with a load', () => {
    st().setServerErrors(problems);
    expect([...st().touched].sort()).toEqual(['filter', 'target:hook']);
    loadChannel();
    expect(st().serverErrors).toEqual({});
  });

  it("drops a node's problems when it is edited, and the graph's own with any change", () => {
    st().setServerErrors(problems);
    st().update('target:hook', { config: { url: 'http://h/' } });
    expect(Object.keys(st().serverErrors).sort()).toEqual(['', 'filter']);
    // The rule's name keeps its problem until the rule's fields change.
    expect(st().serverErrors['']).toEqual([{ message: 'name differs', field: 'name' }]);
    st().setRule('created', 'x');
    expect(Object.keys(st().serverErrors)).toEqual(['filter']);
  });

  it("drops a removed node's problems", () => {
    st().setServerErrors(problems);
    st().onNodesChange([{ type: 'remove', id: 'filter' }]);
    expect(Object.keys(st().serverErrors).sort()).toEqual(['', 'target:hook']);
  });
});
