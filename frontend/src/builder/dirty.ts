/**
 * Whether the builder's channel has changes that are not saved: the document saving would send, compared with the
 * one of the graph as it was loaded or last saved. Node positions are part of it (the rule's layout), so moving a
 * node is a change; selecting one is not. Pure: no React.
 */
import { graphToApi, type Conversion, type RuleState } from './convert';
import type { BuilderEdge, BuilderNode } from './types';

/** Channel is what the builder edits: the graph and the rule's own fields (the store's Snapshot). */
export interface Channel {
  nodes: BuilderNode[];
  edges: BuilderEdge[];
  ruleName: string;
  description: string;
  enabled: boolean;
}

/** ruleState is the rule's state of the Enabled switch. */
export const ruleState = (enabled: boolean): RuleState => (enabled ? 'ENABLED' : 'DISABLED');

/** stableJSON is JSON with the keys of every object sorted: equal values give equal text. */
export function stableJSON(v: unknown): string {
  return JSON.stringify(v, (_, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
}

/**
 * conversionKey is the text that two conversions share when saving either would send the same: the bus, the
 * sources to write, the rule with its targets and layout. The graph's problems are part of it: a node that sends
 * nothing yet (a second filter, a transform not connected) is a change too.
 */
export function conversionKey(c: Conversion): string {
  return stableJSON({ bus: c.bus, sources: c.sources, rule: c.rule, errors: c.errors });
}

/** channelKey is conversionKey of what the builder shows. */
export function channelKey(s: Channel): string {
  return conversionKey(graphToApi({ nodes: s.nodes, edges: s.edges }, s.ruleName, s.description, ruleState(s.enabled)));
}

/**
 * graphKey is the text that two channels share when the canvas would show them alike: the nodes (ids, data,
 * positions), the edges and the rule's fields. The builder loads a channel read again only when it differs.
 */
export function graphKey(s: Channel): string {
  return stableJSON({
    nodes: s.nodes.map((n) => ({ id: n.id, position: n.position, data: n.data })),
    edges: s.edges.map((e) => e.id),
    rule: [s.ruleName, s.description, s.enabled],
  });
}
