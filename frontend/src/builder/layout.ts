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
