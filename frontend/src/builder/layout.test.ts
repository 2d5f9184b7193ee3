import { describe, expect, it } from 'vitest';
import { autoLayout, NODE_HEIGHT, NODE_WIDTH } from './layout';
import type { BuilderNode, Graph, NodeData } from './types';

// Every node starts at the same place: the layout has to spread them.
const node = (id: string, data: NodeData): BuilderNode => ({ id, type: data.kind, position: { x: 0, y: 0 }, data });
const target = (name: string): NodeData => ({ kind: 'target', targetType: 'log', plugin: false, name, config: {} });
const edge = (source: string, target: string) => ({ id: `${source}->${target}`, source, target });

function channel(): Graph {
  return {
    nodes: [
      node('t3', target('c')),
      node('t2', target('b')),
      node('t1', target('a')),
      node('x', { kind: 'transform', mode: 'path', inputPathsMap: '', inputTemplate: '', input: '', inputPath: '$.data' }),
      node('f', { kind: 'filter', pattern: '{"type": ["a"]}' }),
      node('b', { kind: 'bus', name: 'orders' }),
      node('s2', { kind: 'source', sourceType: 'http', name: 'web', config: {} }),
      node('s1', { kind: 'source', sourceType: 'schedule', name: 'tick', config: {} }),
    ],
    edges: [edge('s1', 'b'), edge('s2', 'b'), edge('b', 'f'), edge('f', 'x'), edge('x', 't1'), edge('f', 't2'), edge('f', 't3')],
  };
}

describe('autoLayout', () => {
  it('places every node right of the nodes its edges come from', async () => {
    const g = await autoLayout(channel());
    const pos = Object.fromEntries(g.nodes.map((n) => [n.id, n.position]));
    for (const e of g.edges) expect(pos[e.target].x, `${e.source} -> ${e.target}`).toBeGreaterThan(pos[e.source].x);
    // Through the transform, t1 lands a column further than the targets the filter feeds directly.
    expect(pos.t1.x).toBeGreaterThan(pos.x.x);
  });

  it('lets no two nodes overlap', async () => {
    const sizes = { f: { height: 240 } };
    const g = await autoLayout(channel(), sizes);
    const box = (n: BuilderNode) => ({ ...n.position, w: NODE_WIDTH, h: n.id === 'f' ? 240 : NODE_HEIGHT });
    for (const a of g.nodes) {
      for (const b of g.nodes) {
        if (a.id >= b.id) continue;
        const [p, q] = [box(a), box(b)];
        const apart = p.x + p.w <= q.x || q.x + q.w <= p.x || p.y + p.h <= q.y || q.y + q.h <= p.y;
        expect(apart, `${a.id} ${JSON.stringify(p)} overlaps ${b.id} ${JSON.stringify(q)}`).toBe(true);
      }
    }
  });

  it('uses the measured height of a node', async () => {
    const g = channel();
    g.nodes = g.nodes.map((n) => ({ ...n, measured: { width: NODE_WIDTH, height: 400 } }));
    const out = await autoLayout(g);
    // t2 and t3, both fed by the filter, share a column: one is below the other by at least its height.
    const y = (id: string) => out.nodes.find((n) => n.id === id)!.position.y;
    expect(Math.abs(y('t2') - y('t3'))).toBeGreaterThanOrEqual(400);
  });

  it('keeps the nodes, their data and the edges', async () => {
    const g = channel();
    const out = await autoLayout(g);
    expect(out.edges).toEqual(g.edges);
    expect(out.nodes.map((n) => [n.id, n.data])).toEqual(g.nodes.map((n) => [n.id, n.data]));
  });
});
