/**
 * The live status of a saved channel's nodes: the builder reads its rule's targets and its bus's sources again every
 * few seconds and each node of a saved target or source shows its health, last failure and counters. Pure: no
 * React here.
 */
import type { Source, Target } from '../api/client';
import type { NodeData } from './types';

export type TargetStatus = NonNullable<Target['status']>;
export type SourceStatus = NonNullable<Source['status']>;

/** ChannelStatus is the status of a saved rule's targets and its bus's sources, by name. */
export interface ChannelStatus {
  targets: Record<string, TargetStatus>;
  sources: Record<string, SourceStatus>;
}

/** channelStatus indexes the API's lists of targets and sources by name; those without a status are left out. */
export function channelStatus(targets: Target[], sources: Source[]): ChannelStatus {
  const out: ChannelStatus = { targets: {}, sources: {} };
  for (const t of targets) if (t.name && t.status) out.targets[t.name] = t.status;
  for (const s of sources) if (s.name && s.status) out.sources[s.name] = s.status;
  return out;
}

/**
 * nodeStatus is the status a node shows: a target's or a source's as saved. A node is the saved one when it was
 * loaded from the API (its id is "target:<name>" or "source:<name>", apiToGraph's) and still has its name: a node
 * dropped from the palette, or renamed, is not saved yet and shows none.
 */
export function nodeStatus(s: ChannelStatus | undefined, id: string, data: NodeData): TargetStatus | SourceStatus | undefined {
  if (!s) return undefined;
  if (data.kind === 'target' && id === `target:${data.name}`) return s.targets[data.name];
  if (data.kind === 'source' && id === `source:${data.name}`) return s.sources[data.name];
  return undefined;
}
