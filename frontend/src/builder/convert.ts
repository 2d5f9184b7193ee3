/**
 * Graph ↔ API conversion of the channel builder. A channel is sources → bus → filter (the rule's event pattern) →
 * [transform] → targets. Pure: no React, no fetch.
 */
import type { Rule, Schemas, Source, Target } from '../api/client';
import { layoutOf, withLayout, type Layout, type Position } from './layout';
import { checkPattern } from './patternCheck';
import type { BuilderEdge, BuilderNode, Graph, NodeData, SourceData, TargetData, TransformData } from './types';

/** BUILTIN_TARGET_TYPES are the control plane's own target types; any other type names a sink plugin. */
export const BUILTIN_TARGET_TYPES = ['http', 'api-destination', 'bus', 'log'] as const;

/** MAX_TARGETS is how many targets a rule may have (domain/target.MaxPerRule). */
export const MAX_TARGETS = 5;

// Names of buses, rules, targets and sources: no dots (connector names join them with dots).
const NAME = /^[A-Za-z0-9_-]{1,64}$/; // domain/names.go nameRe

export type RuleBody = Rule & { layout: Layout; targets: Target[] };

export type RuleState = NonNullable<Rule['state']>;

/** RETRY_ATTEMPTS and EVENT_AGE are the bounds and defaults of a target's retry policy (domain/target). */
export const RETRY_ATTEMPTS = { min: 0, max: 185, default: 185 } as const;
export const EVENT_AGE = { min: 60, max: 86400, default: 86400 } as const;

export type DeliveryField = 'maximumRetryAttempts' | 'maximumEventAgeInSeconds' | 'deadLetterBus';

/**
 * deliveryErrors checks a target's retry policy and dead-letter bus, by field: the side panel shows them at their
 * field, graphToApi on the node. busName is the channel's bus, which cannot be its own dead-letter bus.
 */
export function deliveryErrors(d: TargetData, busName: string): Partial<Record<DeliveryField, string>> {
  const errs: Partial<Record<DeliveryField, string>> = {};
  const within = (v: number | undefined, b: { min: number; max: number }) => v === undefined || (Number.isInteger(v) && v >= b.min && v <= b.max);
  if (!within(d.retry?.maximumRetryAttempts, RETRY_ATTEMPTS)) {
    errs.maximumRetryAttempts = `retry attempts must be a whole number from ${RETRY_ATTEMPTS.min} to ${RETRY_ATTEMPTS.max}`;
  }
  if (!within(d.retry?.maximumEventAgeInSeconds, EVENT_AGE)) {
    errs.maximumEventAgeInSeconds = `the maximum event age must be a whole number of seconds from ${EVENT_AGE.min} to ${EVENT_AGE.max}`;
  }
  const dlq = d.deadLetterBus ?? '';
  if (dlq !== '' && !NAME.test(dlq)) errs.deadLetterBus = 'the dead-letter bus must be the name of a bus (letters, digits, "_" and "-")';
  else if (dlq !== '' && dlq === busName) errs.deadLetterBus = `the dead-letter bus must not be the channel's own bus (${busName})`;
  return errs;
}

export interface Conversion {
  bus: string;
  /** sources are the sources to write: new ones and changed ones. */
  sources: Source[];
  rule: RuleBody;
  /** errors are messages per node id; the key "" holds those of the graph as a whole. */
  errors: Record<string, string[]>;
  /** nodes tell which node each part of the document comes from: the server's problems point at the parts. */
  nodes: ChannelNodes;
}

/** ChannelNodes are the node ids of a converted document's parts, in the document's order. */
export interface ChannelNodes {
  /** sources are the nodes of Conversion.sources, in its order. */
  sources: string[];
  /** filter is the node of the rule's event pattern. */
  filter?: string;
  /**
   * targets are the nodes of rule.targets, in its order: the target's, its transform's when it has one, and whether
   * its config is a plugin's (flat keys, which may hold dots and slashes).
   */
  targets: { id: string; transform?: string; plugin: boolean }[];
}

/** ChannelDocument is the body of PUT /buses/{bus}/channels/{rule}. */
export type ChannelDocument = Omit<Schemas['Channel'], 'bus'>;

/**
 * channelDocument is what saving a converted graph sends to the channel API: the bus created when it does not
 * exist, the sources that are new or changed (the bus's others are kept), the rule without its targets, and every
 * target (those left out are deleted).
 */
export function channelDocument(c: Conversion): ChannelDocument {
  const { targets, ...rule } = c.rule;
  return { createBus: true, sources: c.sources, rule, targets };
}

/** nonEmpty drops the keys left empty in a form: the plugin's default applies to them. */
function nonEmpty(c: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(c).filter(([, v]) => v !== ''));
}

/** nodeKey is the identity of a node in a saved layout: stable across reloads, unlike node ids. */
export function nodeKey(d: NodeData, targetOfTransform?: string): string {
  switch (d.kind) {
    case 'bus':
      return 'bus';
    case 'filter':
      return 'filter';
    case 'source':
      return `source:${d.name}`;
    case 'target':
      return `target:${d.name}`;
    case 'transform':
      return `transform:${targetOfTransform ?? ''}`;
  }
}

function parseJSONObject(text: string): { value?: Record<string, unknown>; error?: string } {
  if (text.trim() === '') return { error: 'is empty' };
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: 'must be a JSON object' };
    return { value: v as Record<string, unknown> };
  } catch (e) {
    return { error: 'is not JSON: ' + (e as Error).message };
  }
}

/** builtinConfig turns the form values of a built-in target into the API's TargetConfig. */
function builtinConfig(d: TargetData, err: (m: string) => void): Target['config'] {
  const c = d.config;
  const out: Record<string, unknown> = {};
  switch (d.targetType) {
    case 'http':
      if (!c.url) err('url is required');
      for (const k of ['url', 'method', 'mode', 'timeout'] as const) if (c[k]) out[k] = c[k];
      break;
    case 'api-destination':
      if (!c.apiDestination) err('apiDestination is required');
      if (c.apiDestination) out.apiDestination = c.apiDestination;
      if (c.method) out.method = c.method;
      if (c.timeout) out.timeout = c.timeout;
      if (c.pathParameterValues) {
        try {
          out.pathParameterValues = JSON.parse(c.pathParameterValues);
        } catch {
          err('pathParameterValues must be a JSON array of paths');
        }
      }
      break;
    case 'bus':
      if (!c.bus) err('bus is required');
      if (c.bus) out.bus = c.bus;
      break;
  }
  if (c.headers && d.targetType !== 'bus' && d.targetType !== 'log') {
    const h = parseJSONObject(c.headers);
    if (h.error) err('headers ' + h.error);
    else out.headers = h.value;
  }
  return Object.keys(out).length > 0 ? (out as Target['config']) : undefined;
}

/** builtinFormValues is the inverse of builtinConfig. */
function builtinFormValues(t: Target): Record<string, string> {
  const c = (t.config ?? {}) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(c)) {
    if (v === undefined || v === null) continue;
    out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}

function transformFields(d: TransformData, err: (m: string) => void): Partial<Target> {
  switch (d.mode) {
    case 'template': {
      const paths = d.inputPathsMap.trim() === '' ? { value: {} } : parseJSONObject(d.inputPathsMap);
      if (paths.error) err('inputPathsMap ' + paths.error);
      if (d.inputTemplate.trim() === '') err('inputTemplate is required');
      return { inputTransformer: { inputPathsMap: (paths.value ?? {}) as Record<string, string>, inputTemplate: d.inputTemplate } };
    }
    case 'constant':
      if (d.input.trim() === '') err('input is required');
      else {
        try {
          JSON.parse(d.input);
        } catch {
          err('input must be JSON');
        }
      }
      return { input: d.input };
    case 'path':
      if (!d.inputPath.startsWith('$')) err('inputPath must be a JSON path starting with $');
      return { inputPath: d.inputPath };
  }
}

/**
 * graphToApi converts the builder's graph into the bus name, the bus's sources and the rule with its targets;
 * state, when given, is the rule's.
 */
export function graphToApi(graph: Graph, ruleName: string, description = '', state?: RuleState): Conversion {
  const errors: Record<string, string[]> = {};
  const addErr = (id: string, m: string) => (errors[id] ??= []).push(m);
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const outs = (id: string) => graph.edges.filter((e) => e.source === id).map((e) => byId.get(e.target)).filter((n): n is BuilderNode => !!n);
  const ins = (id: string) => graph.edges.filter((e) => e.target === id).map((e) => byId.get(e.source)).filter((n): n is BuilderNode => !!n);
  const ofKind = <K extends NodeData['kind']>(k: K) => graph.nodes.filter((n) => n.data.kind === k);

  if (!NAME.test(ruleName)) addErr('', 'the rule needs a name (letters, digits, "_" and "-")');

  const buses = ofKind('bus');
  if (buses.length === 0) addErr('', 'drop a bus on the canvas');
  for (const b of buses.slice(1)) addErr(b.id, 'a rule belongs to one bus; remove this one');
  const busNode = buses[0];
  const busName = busNode && busNode.data.kind === 'bus' ? busNode.data.name : '';
  if (busNode && !NAME.test(busName)) addErr(busNode.id, 'bus name is required');

  const nodes: ChannelNodes = { sources: [], targets: [] };
  const sources: Source[] = [];
  const sourceNames = new Set<string>();
  for (const n of ofKind('source')) {
    const d = n.data as SourceData;
    if (!NAME.test(d.name)) addErr(n.id, 'source name is required');
    else if (sourceNames.has(d.name)) addErr(n.id, `another source is named ${d.name}`);
    sourceNames.add(d.name);
    if (!outs(n.id).some((m) => m.data.kind === 'bus')) addErr(n.id, 'connect the source to the bus');
    for (const m of outs(n.id)) if (m.data.kind !== 'bus') addErr(n.id, 'a source feeds the bus only');
    const src: Source = { name: d.name, type: d.sourceType, config: nonEmpty(d.config) };
    if (d.saved !== JSON.stringify(src)) {
      sources.push(src);
      nodes.sources.push(n.id);
    }
  }

  const filters = ofKind('filter');
  if (filters.length === 0) addErr('', 'drop a filter (the rule\'s event pattern) on the canvas');
  for (const f of filters.slice(1)) addErr(f.id, 'a rule has one filter; remove this one');
  const filter = filters[0];
  let eventPattern: Record<string, unknown> = {};
  if (filter) nodes.filter = filter.id;
  if (filter && filter.data.kind === 'filter') {
    const problems = checkPattern(filter.data.pattern);
    for (const p of problems) addErr(filter.id, p.path === '' ? p.message : `in the event pattern, ${p.path}: ${p.message}`);
    if (problems.length === 0) eventPattern = JSON.parse(filter.data.pattern) as Record<string, unknown>;
    if (busNode && !ins(filter.id).some((m) => m.id === busNode.id)) addErr(filter.id, 'connect the bus to the filter');
  }

  const targets: Target[] = [];
  const targetNames = new Set<string>();
  const layout: Layout = { version: 1, nodes: {} };
  for (const n of graph.nodes) {
    if (n.data.kind !== 'transform') layout.nodes[nodeKey(n.data)] = n.position;
  }
  for (const n of ofKind('transform')) {
    const next = outs(n.id).filter((m) => m.data.kind === 'target');
    if (next.length !== 1) addErr(n.id, 'connect the transform to one target');
    if (filter && !ins(n.id).some((m) => m.id === filter.id)) addErr(n.id, 'connect the filter to the transform');
    if (next.length === 1 && next[0].data.kind === 'target') layout.nodes[nodeKey(n.data, next[0].data.name)] = n.position;
  }
  for (const n of ofKind('target')) {
    const d = n.data as TargetData;
    const err = (m: string) => addErr(n.id, m);
    if (!NAME.test(d.name)) err('target name is required');
    else if (targetNames.has(d.name)) err(`another target is named ${d.name}`);
    targetNames.add(d.name);
    const from = ins(n.id);
    const transforms = from.filter((m) => m.data.kind === 'transform');
    const fromFilter = filter !== undefined && from.some((m) => m.id === filter.id);
    if (transforms.length > 1) err('a target has at most one transform');
    if (!fromFilter && transforms.length === 0) err('connect the filter (or a transform) to the target');
    if (fromFilter && transforms.length > 0) err('connect the target to the filter or to a transform, not both');
    const t: Target = { ...(d.keep ?? {}), name: d.name, type: d.targetType as Target['type'] };
    for (const m of Object.values(deliveryErrors(d, busName))) err(m);
    const retry = Object.fromEntries(Object.entries(d.retry ?? {}).filter(([, v]) => v !== undefined));
    if (Object.keys(retry).length > 0) t.retryPolicy = retry;
    if (d.deadLetterBus) t.deadLetterConfig = { bus: d.deadLetterBus };
    if (d.plugin) {
      t.config = nonEmpty(d.config) as Target['config'];
    } else {
      const c = builtinConfig(d, err);
      if (c) t.config = c;
    }
    if (transforms.length === 1 && transforms[0].data.kind === 'transform') {
      Object.assign(t, transformFields(transforms[0].data, (m) => addErr(transforms[0].id, m)));
    }
    targets.push(t);
    nodes.targets.push({ id: n.id, ...(transforms.length === 1 ? { transform: transforms[0].id } : {}), plugin: d.plugin });
  }
  if (targets.length === 0) addErr('', 'drop at least one target on the canvas');
  if (targets.length > MAX_TARGETS) addErr('', `a rule has at most ${MAX_TARGETS} targets`);

  const rule = withLayout({ name: ruleName, description: description || undefined, eventPattern, ...(state ? { state } : {}), targets } as Rule & { targets: Target[] }, layout);
  return { bus: busName, sources, rule, errors, nodes };
}

// Default positions of a graph without a saved layout: columns from left to right.
const COLUMN = { source: 0, bus: 260, filter: 520, transform: 780, target: 1040 } as const;
// Rows are as far apart as a node with its live status is high (nodes.tsx).
const ROW = 200;

/** apiToGraph rebuilds the builder's graph of a saved rule, at the positions its layout holds. */
export function apiToGraph(busName: string, rule: Rule, targets: Target[], sources: Source[]): Graph {
  const layout = layoutOf(rule as { layout?: unknown });
  const nodes: BuilderNode[] = [];
  const edges: BuilderEdge[] = [];
  const place = (key: string, col: keyof typeof COLUMN, row: number): Position => layout?.nodes[key] ?? { x: COLUMN[col], y: 40 + row * ROW };
  const edge = (source: string, target: string) => edges.push({ id: `${source}->${target}`, source, target });

  nodes.push({ id: 'bus', type: 'bus', position: place('bus', 'bus', 0), data: { kind: 'bus', name: busName } });
  sources.forEach((s, i) => {
    const id = `source:${s.name}`;
    const src: Source = { name: s.name ?? '', type: s.type ?? '', config: nonEmpty(s.config ?? {}) };
    nodes.push({
      id,
      type: 'source',
      position: place(id, 'source', i),
      data: {
        kind: 'source',
        sourceType: src.type!,
        name: src.name!,
        config: { ...src.config },
        saved: JSON.stringify(src),
        ...(s.webhook ? { webhook: { token: s.webhook.token, urls: s.webhook.urls ?? [] } } : {}),
      },
    });
    edge(id, 'bus');
  });
  nodes.push({
    id: 'filter',
    type: 'filter',
    position: place('filter', 'filter', 0),
    data: { kind: 'filter', pattern: JSON.stringify(rule.eventPattern ?? {}, null, 2) },
  });
  edge('bus', 'filter');
  targets.forEach((t, i) => {
    const name = t.name ?? '';
    const id = `target:${name}`;
    const type = t.type ?? '';
    const plugin = !(BUILTIN_TARGET_TYPES as readonly string[]).includes(type);
    // The status is the runtime's, not the rule's: the nodes show it live (status.ts), it is never sent back.
    const { name: _n, type: _t, config, inputTransformer, input, inputPath, retryPolicy, deadLetterConfig, status: _s, createdAt: _c, updatedAt: _u, ...keep } = t;
    nodes.push({
      id,
      type: 'target',
      position: place(id, 'target', i),
      data: {
        kind: 'target',
        targetType: type,
        plugin,
        name,
        config: plugin ? { ...((config ?? {}) as Record<string, string>) } : builtinFormValues(t),
        ...(retryPolicy ? { retry: { ...retryPolicy } } : {}),
        ...(deadLetterConfig?.bus ? { deadLetterBus: deadLetterConfig.bus } : {}),
        ...(Object.keys(keep).length > 0 ? { keep } : {}),
      },
    });
    let transform: TransformData | undefined;
    if (inputTransformer) {
      transform = {
        kind: 'transform',
        mode: 'template',
        inputPathsMap: JSON.stringify(inputTransformer.inputPathsMap ?? {}, null, 2),
        inputTemplate: inputTransformer.inputTemplate ?? '',
        input: '',
        inputPath: '',
      };
    } else if (input !== undefined && input !== '') {
      transform = { kind: 'transform', mode: 'constant', inputPathsMap: '', inputTemplate: '', input, inputPath: '' };
    } else if (inputPath !== undefined && inputPath !== '') {
      transform = { kind: 'transform', mode: 'path', inputPathsMap: '', inputTemplate: '', input: '', inputPath };
    }
    if (transform) {
      const tid = `transform:${name}`;
      nodes.push({ id: tid, type: 'transform', position: place(tid, 'transform', i), data: transform });
      edge('filter', tid);
      edge(tid, id);
    } else {
      edge('filter', id);
    }
  });
  return { nodes, edges };
}
