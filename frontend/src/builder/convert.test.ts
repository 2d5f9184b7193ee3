import { describe, expect, it } from 'vitest';
import type { Rule, Source, Target } from '../api/client';
import { apiToGraph, graphToApi } from './convert';
import { layoutOf, withLayout } from './layout';
import type { BuilderNode, Graph, NodeData } from './types';

const node = (id: string, data: NodeData, x = 0, y = 0): BuilderNode => ({ id, type: data.kind, position: { x, y }, data });
const edge = (source: string, target: string) => ({ id: `${source}->${target}`, source, target });

function channel(): Graph {
  return {
    nodes: [
      node('s1', { kind: 'source', sourceType: 'schedule', name: 'tick', config: { 'schedule.cron': '@every 1m' } }, 0, 10),
      node('b1', { kind: 'bus', name: 'orders' }, 250, 10),
      node('f1', { kind: 'filter', pattern: '{"type": ["order.created"]}' }, 500, 10),
      node('x1', { kind: 'transform', mode: 'template', inputPathsMap: '{"id": "$.data.id"}', inputTemplate: '{"order": <id>}', input: '', inputPath: '' }, 750, 10),
      node('t1', { kind: 'target', targetType: 'http', plugin: false, name: 'hook', config: { url: 'http://127.0.0.1:9/x', method: 'POST', headers: '{"X-A": "1"}' } }, 1000, 10),
      node('t2', { kind: 'target', targetType: 'mqtt', plugin: true, name: 'iot', config: { 'mqtt.broker': 'tcp://b:1883', 'mqtt.password': '********' } }, 1000, 200),
    ],
    edges: [edge('s1', 'b1'), edge('b1', 'f1'), edge('f1', 'x1'), edge('x1', 't1'), edge('f1', 't2')],
  };
}

describe('graphToApi', () => {
  it('makes the sources, the rule with its pattern, and targets with their transformers', () => {
    const c = graphToApi(channel(), 'created', 'new orders');
    expect(c.errors).toEqual({});
    expect(c.bus).toBe('orders');
    expect(c.sources).toEqual([{ name: 'tick', type: 'schedule', config: { 'schedule.cron': '@every 1m' } }]);
    expect(c.rule.name).toBe('created');
    expect(c.rule.description).toBe('new orders');
    expect(c.rule.eventPattern).toEqual({ type: ['order.created'] });
    expect(c.rule.targets).toEqual([
      {
        name: 'hook',
        type: 'http',
        config: { url: 'http://127.0.0.1:9/x', method: 'POST', headers: { 'X-A': '1' } },
        inputTransformer: { inputPathsMap: { id: '$.data.id' }, inputTemplate: '{"order": <id>}' },
      },
      { name: 'iot', type: 'mqtt', config: { 'mqtt.broker': 'tcp://b:1883', 'mqtt.password': '********' } },
    ]);
  });

  it('sends the retry policy, the dead-letter bus and the rule state', () => {
    const g = channel();
    Object.assign(g.nodes[4].data, { retry: { maximumRetryAttempts: 3, maximumEventAgeInSeconds: undefined }, deadLetterBus: 'orders-dlq' });
    const c = graphToApi(g, 'created', '', 'DISABLED');
    expect(c.errors).toEqual({});
    expect(c.rule.state).toBe('DISABLED');
    expect(c.rule.targets[0]).toMatchObject({ name: 'hook', retryPolicy: { maximumRetryAttempts: 3 }, deadLetterConfig: { bus: 'orders-dlq' } });
    expect(c.rule.targets[0].retryPolicy).toEqual({ maximumRetryAttempts: 3 });
    // Left to the API's defaults, they are not sent.
    expect(Object.keys(c.rule.targets[1])).not.toContain('retryPolicy');
    expect(Object.keys(c.rule.targets[1])).not.toContain('deadLetterConfig');
  });

  it('notes the node of each part of the document, in its order', () => {
    const g = channel();
    (g.nodes[0].data as { saved?: string }).saved = JSON.stringify({ name: 'tick', type: 'schedule', config: { 'schedule.cron': '@every 1m' } });
    g.nodes.push(node('s2', { kind: 'source', sourceType: 'http', name: 'web', config: {} }));
    g.edges.push(edge('s2', 'b1'));
    const c = graphToApi(g, 'created');
    // The unchanged source is not sent: the one sent first is s2's.
    expect(c.nodes).toEqual({
      sources: ['s2'],
      filter: 'f1',
      targets: [
        { id: 't1', transform: 'x1', plugin: false },
        { id: 't2', plugin: true },
      ],
    });
  });

  it('saves every node position under a stable key', () => {
    const c = graphToApi(channel(), 'created');
    expect(c.rule.layout.nodes).toEqual({
      'source:tick': { x: 0, y: 10 },
      bus: { x: 250, y: 10 },
      filter: { x: 500, y: 10 },
      'transform:hook': { x: 750, y: 10 },
      'target:hook': { x: 1000, y: 10 },
      'target:iot': { x: 1000, y: 200 },
    });
  });

  const broken: { name: string; change: (g: Graph) => void; rule?: string; id: string; msg: string }[] = [
    { name: 'rule name', change: () => {}, rule: '', id: '', msg: 'the rule needs a name' },
    { name: 'no bus', change: (g) => (g.nodes = g.nodes.filter((n) => n.id !== 'b1')), id: '', msg: 'drop a bus' },
    { name: 'no filter', change: (g) => (g.nodes = g.nodes.filter((n) => n.id !== 'f1')), id: '', msg: 'drop a filter' },
    { name: 'bad pattern', change: (g) => ((g.nodes[2].data as { pattern: string }).pattern = '{"type": '), id: 'f1', msg: 'event pattern is not JSON' },
    { name: 'pattern not an object', change: (g) => ((g.nodes[2].data as { pattern: string }).pattern = '[1]'), id: 'f1', msg: 'event pattern must be a JSON object' },
    {
      name: 'pattern value not in an array',
      change: (g) => ((g.nodes[2].data as { pattern: string }).pattern = '{"type": "order.created"}'),
      id: 'f1',
      msg: 'in the event pattern, type: the value must be an array of allowed values, such as ["order.created"]',
    },
    {
      name: 'dead letters to the own bus',
      change: (g) => ((g.nodes[4].data as { deadLetterBus?: string }).deadLetterBus = 'orders'),
      id: 't1',
      msg: "the dead-letter bus must not be the channel's own bus (orders)",
    },
    {
      name: 'too many retry attempts',
      change: (g) => ((g.nodes[4].data as { retry?: object }).retry = { maximumRetryAttempts: 186 }),
      id: 't1',
      msg: 'retry attempts must be a whole number from 0 to 185',
    },
    {
      name: 'too short an event age',
      change: (g) => ((g.nodes[4].data as { retry?: object }).retry = { maximumEventAgeInSeconds: 59 }),
      id: 't1',
      msg: 'from 60 to 86400',
    },
    { name: 'unconnected target', change: (g) => (g.edges = g.edges.filter((e) => e.target !== 't2')), id: 't2', msg: 'connect the filter' },
    { name: 'unconnected source', change: (g) => (g.edges = g.edges.filter((e) => e.source !== 's1')), id: 's1', msg: 'connect the source to the bus' },
    { name: 'http without url', change: (g) => ((g.nodes[4].data as { config: Record<string, string> }).config = {}), id: 't1', msg: 'url is required' },
    { name: 'duplicate target', change: (g) => ((g.nodes[5].data as { name: string }).name = 'hook'), id: 't2', msg: 'another target is named hook' },
    { name: 'transform without template', change: (g) => ((g.nodes[3].data as { inputTemplate: string }).inputTemplate = ''), id: 'x1', msg: 'inputTemplate is required' },
    { name: 'bus name', change: (g) => ((g.nodes[1].data as { name: string }).name = ''), id: 'b1', msg: 'bus name is required' },
  ];
  it.each(broken)('reports $name on the node', ({ change, rule, id, msg }) => {
    const g = channel();
    change(g);
    const errs = graphToApi(g, rule ?? 'created').errors[id] ?? [];
    expect(errs.some((e) => e.includes(msg)), JSON.stringify(errs)).toBe(true);
  });
});

describe('apiToGraph', () => {
  it('gives back the graph graphToApi saved, positions included', () => {
    const c = graphToApi(channel(), 'created');
    const saved: Rule = { name: c.rule.name, eventPattern: c.rule.eventPattern, ...{ layout: c.rule.layout } };
    const targets: Target[] = c.rule.targets.map((t) => ({ ...t, status: { state: 'RUNNING' }, createdAt: '2026-01-01T00:00:00Z' }));
    const g = apiToGraph('orders', saved, targets, c.sources as Source[]);
    const again = graphToApi(g, 'created');
    expect(again.errors).toEqual({});
    expect(again.rule).toEqual(c.rule);
    // The sources are as they were: nothing to write again.
    expect(again.sources).toEqual([]);
    const src = g.nodes.find((n) => n.id === 'source:tick')!;
    src.data = { ...src.data, config: { 'schedule.cron': '@every 5m' } } as typeof src.data;
    expect(graphToApi(g, 'created').sources).toEqual([{ name: 'tick', type: 'schedule', config: { 'schedule.cron': '@every 5m' } }]);
    const pos = Object.fromEntries(g.nodes.map((n) => [n.id, n.position]));
    expect(pos['target:iot']).toEqual({ x: 1000, y: 200 });
    expect(pos['transform:hook']).toEqual({ x: 750, y: 10 });
  });

  it('never sends the runtime status of saved targets back (the nodes show it live)', () => {
    const t: Target = {
      name: 'hook',
      type: 'log',
      status: { state: 'RUNNING', health: 'HEALTHY', counters: { delivered: 5 }, tasks: [{ id: 0, counters: { delivered: 2, failed: 1 } }] },
    };
    const g = apiToGraph('orders', { name: 'r', eventPattern: {} }, [t], []);
    expect(JSON.stringify(g.nodes.find((n) => n.id === 'target:hook')!.data)).not.toContain('RUNNING');
    expect(graphToApi(g, 'r').rule.targets[0]).toEqual({ name: 'hook', type: 'log' });
  });

  it('keeps fields the builder does not edit', () => {
    const t: Target = { name: 'hook', type: 'http', config: { url: 'http://h/' }, retryPolicy: { maximumRetryAttempts: 3 } };
    const g = apiToGraph('orders', { name: 'r', eventPattern: { source: ['a'] } as unknown as Rule['eventPattern'] }, [t], []);
    expect(graphToApi(g, 'r').rule.targets[0]).toEqual(t);
  });

  it('makes the retry policy and the dead-letter bus fields of the target, and gives them back', () => {
    const t: Target = {
      name: 'hook',
      type: 'http',
      config: { url: 'http://h/' },
      retryPolicy: { maximumRetryAttempts: 10, maximumEventAgeInSeconds: 3600 },
      deadLetterConfig: { bus: 'orders-dlq' },
      format: 'aws',
    };
    const g = apiToGraph('orders', { name: 'r', eventPattern: { source: ['a'] } as unknown as Rule['eventPattern'] }, [t], []);
    const d = g.nodes.find((n) => n.id === 'target:hook')!.data;
    expect(d).toMatchObject({ retry: { maximumRetryAttempts: 10, maximumEventAgeInSeconds: 3600 }, deadLetterBus: 'orders-dlq', keep: { format: 'aws' } });
    expect(JSON.stringify((d as { keep?: object }).keep)).not.toContain('retry');
    expect(graphToApi(g, 'r').rule.targets[0]).toEqual(t);
  });

  it('keeps the webhook of an http source to show it, and never sends it back', () => {
    const s: Source = { name: 'web', type: 'http', config: { 'http.methods': 'POST' }, webhook: { token: '***', urls: ['http://h/api/v1/webhooks/***'] } };
    const g = apiToGraph('orders', { name: 'r', eventPattern: {} }, [], [s]);
    const d = g.nodes.find((n) => n.id === 'source:web')!.data;
    expect(d).toMatchObject({ webhook: { token: '***', urls: ['http://h/api/v1/webhooks/***'] } });
    // Unchanged, the source is not written again; changed, it is written without its webhook.
    expect(graphToApi(g, 'r').sources).toEqual([]);
    (d as { config: Record<string, string> }).config = { 'http.methods': 'PUT' };
    expect(graphToApi(g, 'r').sources).toEqual([{ name: 'web', type: 'http', config: { 'http.methods': 'PUT' } }]);
  });

  it('places nodes in columns when the rule has no layout', () => {
    const g = apiToGraph('orders', { name: 'r', eventPattern: {} }, [{ name: 'a', type: 'log' }, { name: 'b', type: 'log', inputPath: '$.data' }], []);
    const pos = Object.fromEntries(g.nodes.map((n) => [n.id, n.position]));
    expect(pos.bus.x).toBeLessThan(pos.filter.x);
    expect(pos.filter.x).toBeLessThan(pos['transform:b'].x);
    expect(pos['transform:b'].x).toBeLessThan(pos['target:b'].x);
    expect(pos['target:a'].y).not.toBe(pos['target:b'].y);
  });
});

describe('layout', () => {
  it('reads what withLayout wrote and rounds positions', () => {
    const r = withLayout({ name: 'r' }, { version: 1, nodes: { bus: { x: 1.4, y: 2.6 } } });
    expect(layoutOf(r)).toEqual({ version: 1, nodes: { bus: { x: 1, y: 3 } } });
  });
  it.each([
    { name: 'no layout', rule: {} },
    { name: 'another version', rule: { layout: { version: 2, nodes: {} } } },
    { name: 'not an object', rule: { layout: 'x' } },
  ])('has none with $name', ({ rule }) => {
    expect(layoutOf(rule)).toBeUndefined();
  });
  it('drops entries that are not positions', () => {
    expect(layoutOf({ layout: { version: 1, nodes: { bus: { x: 'a', y: 1 }, filter: { x: 1, y: 2 } } } })).toEqual({ version: 1, nodes: { filter: { x: 1, y: 2 } } });
  });
});
