/**
 * The builder's palette and the schemas of its nodes' forms. Sources and sink plugins come from the worker's
 * plugin list (GET /api/v1/runtime/plugins); only the control plane's own node kinds and target types are
 * described here. Pure.
 */
import type { RuntimePlugin } from '../api/client';
import { fieldLabel } from '../format';
import type { JSONSchemaObject } from '../forms/schemaForm';
import { BUILTIN_TARGET_TYPES } from './convert';
import type { PaletteItem } from './types';

export interface PaletteGroup {
  title: string;
  items: PaletteItem[];
}

/**
 * BACKING_SINK_CLASSES are the sink plugins the control plane runs for its own connectors: a bus's router and
 * the built-in target types (http and api-destination targets run http, bus targets eventbus, log targets log).
 * They are offered through the built-in types, not as plugin targets.
 */
export const BACKING_SINK_CLASSES = ['router', 'http', 'eventbus', 'log'];

const SOURCE_SUFFIX = '-source';

/** buildPalette groups what may be dropped on the canvas. */
export function buildPalette(plugins: RuntimePlugin[]): PaletteGroup[] {
  const sorted = [...plugins].sort((a, b) => (a.class ?? '').localeCompare(b.class ?? ''));
  const sources = sorted
    .filter((p) => p.type === 'source' && p.class?.endsWith(SOURCE_SUFFIX))
    .map((p): PaletteItem => {
      const type = p.class!.slice(0, -SOURCE_SUFFIX.length);
      return { kind: 'source', type, label: `${fieldLabel(type)} source` };
    });
  const sinks = sorted
    .filter((p) => p.type === 'sink' && p.class && !BACKING_SINK_CLASSES.includes(p.class) && !(BUILTIN_TARGET_TYPES as readonly string[]).includes(p.class))
    .map((p): PaletteItem => ({ kind: 'target', type: p.class!, plugin: true, label: `${fieldLabel(p.class!)} (plugin)` }));
  return [
    { title: 'Sources', items: sources },
    { title: 'Bus', items: [{ kind: 'bus', label: 'Bus' }] },
    { title: 'Filter', items: [{ kind: 'filter', label: 'Event pattern' }] },
    { title: 'Transform', items: [{ kind: 'transform', label: 'Input transformer' }] },
    {
      title: 'Targets',
      items: [...BUILTIN_TARGET_TYPES.map((t): PaletteItem => ({ kind: 'target', type: t, plugin: false, label: fieldLabel(t) })), ...sinks],
    },
  ];
}

/** sourceConfigOmitted reports whether a source plugin's key is the control plane's (domain/source reservedKeys). */
export function sourceConfigOmitted(key: string, sourceType: string): boolean {
  if (['connector.class', 'tasks.max', 'output.subject', 'output.stream', 'transforms', 'errors.tolerance'].includes(key)) return true;
  if (key.startsWith('transforms.') || key.startsWith('eb.')) return true;
  return sourceType === 'http' && ['source.stream', 'source.subject', 'source.start'].includes(key);
}

/** targetConfigOmitted reports whether a sink plugin's key is the control plane's (domain/target reserved). */
export function targetConfigOmitted(key: string): boolean {
  if (['connector.class', 'tasks.max', 'topics', 'transforms'].includes(key)) return true;
  return ['transforms.', 'errors.', 'jetstream.', 'eb.'].some((p) => key.startsWith(p));
}

const NAME_PROP = { type: 'string', title: 'Name', description: 'Name of the target within its rule.' };

const DURATION = '^([0-9]+(\\.[0-9]+)?(ms|s|m))+$';

const HEADERS = {
  type: 'string',
  title: 'Headers',
  contentMediaType: 'application/json',
  description: 'Headers added to every request: a JSON object of header names and their values, all strings.',
  examples: [{ 'X-Team': 'shop' }],
};

/** BUILTIN_TARGET_SCHEMAS describe the config of the built-in target types (the API's TargetConfig). */
export const BUILTIN_TARGET_SCHEMAS: Record<(typeof BUILTIN_TARGET_TYPES)[number], JSONSchemaObject> = {
  http: {
    required: ['url'],
    properties: {
      url: { type: 'string', title: 'URL', format: 'uri', description: 'Where each event is sent: an absolute http:// or https:// URL.', examples: ['https://example.com/hooks/orders'] },
      method: { type: 'string', title: 'Method', enum: ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'], default: 'POST', description: 'The HTTP method of the requests.' },
      mode: {
        type: 'string',
        title: 'Mode',
        enum: ['binary', 'structured'],
        default: 'binary',
        description: 'binary: the data is the body, the attributes are ce-* headers; structured: the whole event is the body, as application/cloudevents+json.',
      },
      timeout: { type: 'string', title: 'Timeout', default: '5s', pattern: DURATION, description: 'How long to wait for an answer, between 100ms and 1m.', examples: ['5s'] },
      headers: HEADERS,
    },
  },
  'api-destination': {
    required: ['apiDestination'],
    properties: {
      apiDestination: {
        type: 'string',
        title: 'API destination',
        description: 'An API destination of the account: its endpoint, method, rate limit and connection (the credentials) apply.',
        examples: ['crm-orders'],
      },
      pathParameterValues: {
        type: 'string',
        title: 'Path parameter values',
        contentMediaType: 'application/json',
        description: 'A JSON array of JSON paths into the event, one for each "*" of the endpoint, in order.',
        examples: [['$.data.customerId']],
      },
      timeout: { type: 'string', title: 'Timeout', pattern: DURATION, description: 'How long to wait for an answer, between 100ms and 1m.', examples: ['5s'] },
      headers: HEADERS,
    },
  },
  bus: {
    required: ['bus'],
    properties: { bus: { type: 'string', title: 'Bus', description: 'Another bus of the account, which receives the events as they are.', examples: ['orders-archive'] } },
  },
  log: { properties: {} },
};

export const NAME_SCHEMA: JSONSchemaObject = { required: ['name'], properties: { name: NAME_PROP } };
