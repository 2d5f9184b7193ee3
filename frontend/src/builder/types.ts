import type { Edge, Node } from '@xyflow/react';

/** Node data of the channel builder, discriminated by kind. */
export type SourceData = {
  kind: 'source';
  /** sourceType is the source plugin's class without "-source" (the API's Source.type). */
  sourceType: string;
  name: string;
  config: Record<string, string>;
  /** saved is the source as loaded (JSON of name, type and config): unchanged, it is not written again. */
  saved?: string;
  /** webhook is the receiving side of a saved http source, as the API answered it; read-only, never sent back. */
  webhook?: Webhook;
};

/** Webhook holds an http source's URLs and token; the token reads "***" when the API masks it. */
export type Webhook = { token?: string; urls: string[] };

export type BusData = { kind: 'bus'; name: string };

/** FilterData holds the rule's event pattern as JSON text, as the user edits it. */
export type FilterData = { kind: 'filter'; pattern: string };

export type TransformMode = 'template' | 'constant' | 'path';

export type TransformData = {
  kind: 'transform';
  mode: TransformMode;
  /** inputPathsMap is a JSON object of variable → JSON path (template mode). */
  inputPathsMap: string;
  inputTemplate: string;
  input: string;
  inputPath: string;
};

export type TargetData = {
  kind: 'target';
  /** targetType is http, api-destination, bus, log or the name of a sink plugin. */
  targetType: string;
  plugin: boolean;
  name: string;
  config: Record<string, string>;
  /** retry is the target's retry policy; a bound left out takes the API's default. */
  retry?: RetryPolicy;
  /** deadLetterBus is the bus that receives the events the target gives up; empty: the account's dead-letter stream. */
  deadLetterBus?: string;
  /** keep holds the target's fields the builder does not edit (attributes, format, ...). */
  keep?: Record<string, unknown>;
};

export type RetryPolicy = { maximumRetryAttempts?: number; maximumEventAgeInSeconds?: number };

export type NodeData = SourceData | BusData | FilterData | TransformData | TargetData;
export type NodeKind = NodeData['kind'];

export type BuilderNode = Node<NodeData>;
export type BuilderEdge = Edge;

export interface Graph {
  nodes: BuilderNode[];
  edges: BuilderEdge[];
}

/** PaletteItem is what a palette entry carries through dataTransfer to the canvas. */
export interface PaletteItem {
  kind: NodeKind;
  /** type is the source or target type of source and target items. */
  type?: string;
  plugin?: boolean;
  label: string;
}

export const DND_MIME = 'application/x-eventbridge-node';
