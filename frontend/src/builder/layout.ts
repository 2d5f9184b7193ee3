import type { Graph } from './types';

/** Node positions saved with a rule in its `layout` field: { version: 1, nodes: { <key>: { x, y } } }. */
export interface Position {
  x: number;
  y: number;
}

export interface Layout {
  version: 1;
  nodes: Record<string, Position>;
}

function isPosition(v: unknown): v is Position {
  return typeof v === 'object' && v !== null && Number.isFinite((v as Position).x) && Number.isFinite((v as Position).y);
}

/** layoutOf reads the layout of a rule; a rule without one, or with one the console did not write, has none. */
export function layoutOf(rule: { layout?: unknown } | undefined): Layout | undefined {
  const l = rule?.layout as { version?: unknown; nodes?: unknown } | undefined;
  if (!l || typeof l !== 'object' || l.version !== 1 || typeof l.nodes !== 'object' || l.nodes === null) return undefined;
  const nodes: Record<string, Position> = {};
  for (const [k, v] of Object.entries(l.nodes as Record<string, unknown>)) {
    if (isPosition(v)) nodes[k] = { x: v.x, y: v.y };
  }
  return { version: 1, nodes };
}

/** withLayout returns the rule with layout set; positions are rounded so that the layout stays small. */
export function withLayout<R extends object>(rule: R, layout: Layout): R & { layout: Layout } {
  const nodes: Record<string, Position> = {};
  for (const [k, p] of Object.entries(layout.nodes)) nodes[k] = { x: Math.round(p.x), y: Math.round(p.y) };
  return { ...rule, layout: { version: 1, nodes } };
}

/** NODE_WIDTH is a node's width on the canvas (nodes.tsx); NODE_HEIGHT the height assumed of one not measured yet. */
export const NODE_WIDTH = 200;
export const NODE_HEIGHT = 160;

/**
 * autoLayout places the graph's nodes from left to right along its edges (sources, bus, filter, transforms,
 * targets), apart from each other, with dagre. Each node is NODE_WIDTH wide and as high as sizes says, else as
 * measured on the canvas, else NODE_HEIGHT. It returns the graph with new positions, their top-left corners as
 * React Flow wants them. dagre is loaded on the first call, in a chunk of its own: the first visit does not pay
 * for it.
 */
export async function autoLayout(graph: Graph, sizes: Record<string, { height: number }> = {}): Promise<Graph> {
  const { default: dagre } = await import('@dagrejs/dagre');
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 40, ranksep: 80, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  const height = (n: Graph['nodes'][number]) => sizes[n.id]?.height ?? n.measured?.height ?? NODE_HEIGHT;
  for (const n of graph.nodes) g.setNode(n.id, { width: NODE_WIDTH, height: height(n) });
  for (const e of graph.edges) if (g.hasNode(e.source) && g.hasNode(e.target)) g.setEdge(e.source, e.target);
  dagre.layout(g);
  return {
    nodes: graph.nodes.map((n) => {
      // dagre gives the centre of each node.
      const { x, y } = g.node(n.id);
      return { ...n, position: { x: x! - NODE_WIDTH / 2, y: y! - height(n) / 2 } };
    }),
    edges: graph.edges,
  };
}
