import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { channelDocument, graphToApi } from './convert';
import { channelKey, conversionKey, graphKey, stableJSON, type Channel } from './dirty';
import { isDirty, useBuilder } from './store';
import type { BuilderNode, NodeData } from './types';

const node = (id: string, data: NodeData, x = 0): BuilderNode => ({ id, type: data.kind, position: { x, y: 0 }, data });

// source → bus → filter → target, as a saved channel is loaded.
const saved = { name: 'tick', type: 'schedule', config: { 'schedule.cron': '@every 1m' } };
function channel(): Channel {
  return {
    nodes: [
      node('source:tick', { kind: 'source', sourceType: 'schedule', name: 'tick', config: { 'schedule.cron': '@every 1m' }, saved: JSON.stringify(saved) }, -260),
      node('bus', { kind: 'bus', name: 'orders' }, 0),
      node('filter', { kind: 'filter', pattern: '{"type": ["a"]}' }, 260),
      node('target:hook', { kind: 'target', targetType: 'http', plugin: false, name: 'hook', config: { url: 'http://h/' } }, 520),
    ],
    edges: [
      { id: 'source:tick->bus', source: 'source:tick', target: 'bus' },
      { id: 'bus->filter', source: 'bus', target: 'filter' },
      { id: 'filter->target:hook', source: 'filter', target: 'target:hook' },
    ],
    ruleName: 'created',
    description: 'new orders',
    enabled: true,
  };
}

const edit = (c: Channel, id: string, data: Partial<NodeData>): Channel => ({ ...c, nodes: c.nodes.map((n) => (n.id === id ? { ...n, data: { ...n.data, ...data } as NodeData } : n)) });

describe('stableJSON', () => {
  it('gives equal text for objects with their keys in another order, nested too', () => {
    expect(stableJSON({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: 2 } })).toBe(stableJSON({ a: { c: 2, d: [1, { x: 1, y: 2 }] }, b: 1 }));
    expect(stableJSON([2, 1])).not.toBe(stableJSON([1, 2]));
  });
});

describe('channelKey: what counts as a change', () => {
  const base = channelKey(channel());
  it.each<[string, (c: Channel) => Channel]>([
    ['moving a node (the layout is saved)', (c) => ({ ...c, nodes: c.nodes.map((n) => (n.id === 'bus' ? { ...n, position: { x: 40, y: 10 } } : n)) })],
    ['editing the description', (c) => ({ ...c, description: 'other' })],
    ['switching the rule off', (c) => ({ ...c, enabled: false })],
    ['editing the pattern', (c) => edit(c, 'filter', { pattern: '{"type": ["b"]}' })],
    ["editing a target's config", (c) => edit(c, 'target:hook', { config: { url: 'http://other/' } })],
    ["editing a source's config", (c) => edit(c, 'source:tick', { config: { 'schedule.cron': '@every 2m' } })],
    ['removing an edge', (c) => ({ ...c, edges: c.edges.slice(0, 2) })],
    ['adding a node that sends nothing yet', (c) => ({ ...c, nodes: [...c.nodes, node('filter-9', { kind: 'filter', pattern: '{}' })] })],
    ['setting a retry policy', (c) => edit(c, 'target:hook', { retry: { maximumRetryAttempts: 3 } })],
  ])('%s is a change', (_, change) => {
    expect(channelKey(change(channel()))).not.toBe(base);
  });

  it.each<[string, (c: Channel) => Channel]>([
    ['selecting a node', (c) => ({ ...c, nodes: c.nodes.map((n) => ({ ...n, selected: n.id === 'bus' })) })],
    ['a node measured by React Flow', (c) => ({ ...c, nodes: c.nodes.map((n) => ({ ...n, measured: { width: 200, height: 120 } })) })],
    ['moving a node by less than half a pixel', (c) => ({ ...c, nodes: c.nodes.map((n) => (n.id === 'bus' ? { ...n, position: { x: 0.3, y: -0.2 } } : n)) })],
    ['the nodes in another order', (c) => ({ ...c, nodes: [c.nodes[1], c.nodes[0], c.nodes[2], c.nodes[3]] })],
    ['a config key left empty (the default applies)', (c) => edit(c, 'source:tick', { config: { 'schedule.cron': '@every 1m', 'schedule.zone': '' } })],
    ['a change undone by hand', (c) => edit(edit(c, 'filter', { pattern: '{}' }), 'filter', { pattern: '{"type": ["a"]}' })],
  ])('%s is no change', (_, change) => {
    expect(channelKey(change(channel()))).toBe(base);
  });

  it('is conversionKey of what the page converts', () => {
    const c = channel();
    expect(conversionKey(graphToApi(c, c.ruleName, c.description, 'ENABLED'))).toBe(base);
  });
});

describe('graphKey', () => {
  it('tells a canvas from the same channel with other node ids', () => {
    const c = channel();
    const renamed = { ...c, nodes: c.nodes.map((n) => (n.id === 'target:hook' ? { ...n, id: 'target-3' } : n)) };
    expect(graphKey({ ...c, nodes: c.nodes.map((n) => ({ ...n, selected: true })) })).toBe(graphKey(c));
    expect(graphKey(renamed)).not.toBe(graphKey(c));
  });
});

describe('the store knows unsaved changes', () => {
  const st = () => useBuilder.getState();
  let now = 1_000_000;
  beforeEach(() => {
    vi.spyOn(Date, 'now').mockImplementation(() => (now += 1000));
    const c = channel();
    st().load(c, c.ruleName, c.description, true, c.enabled);
  });
  afterEach(() => vi.restoreAllMocks());

  it('has none after a load, nor after a selection', () => {
    expect(isDirty(st())).toBe(false);
    st().select('bus');
    st().onNodesChange([{ type: 'select', id: 'bus', selected: true }]);
    expect(isDirty(st())).toBe(false);
  });

  it('has some after a move, and none once it is undone', () => {
    st().onNodesChange([{ type: 'position', id: 'bus', position: { x: 80, y: 40 }, dragging: false }]);
    expect(isDirty(st())).toBe(true);
    st().undo();
    expect(isDirty(st())).toBe(false);
  });

  it('has some after a deletion, an edit and a switch of the rule off', () => {
    st().onNodesChange([{ type: 'remove', id: 'target:hook' }]);
    expect(isDirty(st())).toBe(true);
    st().undo();
    st().update('filter', { pattern: '{}' });
    expect(isDirty(st())).toBe(true);
    st().undo();
    st().setEnabled(false);
    expect(isDirty(st())).toBe(true);
  });

  it('counts no defaults filled in by a form as a change', () => {
    st().fillDefaults('target:hook', { url: 'http://h/', method: 'POST' });
    expect(isDirty(st())).toBe(false);
  });

  it('keeps the changes of a channel changed already when defaults are filled in', () => {
    st().setRule('created', 'other');
    st().fillDefaults('target:hook', { url: 'http://h/', method: 'POST' });
    expect(isDirty(st())).toBe(true);
  });

  it('has none once what was sent is marked saved', () => {
    st().setRule('created', 'other');
    const s = st();
    st().markSaved(conversionKey(graphToApi(s, s.ruleName, s.description, 'ENABLED')));
    expect(isDirty(st())).toBe(false);
    st().setRule('created', 'other again');
    expect(isDirty(st())).toBe(true);
  });

  it('sends the document it compares', () => {
    const c = channel();
    const doc = channelDocument(graphToApi(c, c.ruleName, c.description, 'ENABLED'));
    expect(doc.createBus).toBe(true);
    expect(doc.sources).toEqual([]);
    expect(doc.rule).not.toHaveProperty('targets');
    expect(doc.targets?.map((t) => t.name)).toEqual(['hook']);
  });
});
