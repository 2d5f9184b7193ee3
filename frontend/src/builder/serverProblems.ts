/**
 * The problems the channel API finds in a saved document (400 InvalidChannel), placed on the builder's nodes. Each
 * problem has the JSON pointer (RFC 6901) of its place in the document that was sent (/targets/1/config/bus); the
 * document's parts come from the nodes graphToApi noted (Conversion.nodes). Pure: no React, no fetch.
 */
import type { Schemas } from '../api/client';
import type { ChannelNodes } from './convert';

export type ProblemError = Schemas['ProblemError'];

/**
 * ServerProblem is one problem on a node. field names the node's own field it is about (name, pattern,
 * inputTemplate, inputPathsMap, input, inputPath, maximumRetryAttempts, maximumEventAgeInSeconds, deadLetterBus; on
 * the graph: name, description), config a key of its config: the side panel shows fieldMessage under that field.
 */
export interface ServerProblem {
  message: string;
  field?: string;
  config?: string;
}

/** ServerProblems are the problems by node id; the key "" holds those of the graph as a whole (the rule's fields). */
export type ServerProblems = Record<string, ServerProblem[]>;

/** pointerTokens splits a JSON pointer into its reference tokens, ~1 read as "/" and ~0 as "~" (in that order). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .replace(/^\//, '')
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const index = (t: string | undefined) => (t !== undefined && /^(0|[1-9]\d*)$/.test(t) ? Number(t) : undefined);

// A target's own fields the side panel shows, by their place under /targets/i.
const retryFields = new Set(['maximumRetryAttempts', 'maximumEventAgeInSeconds']);
const transformerFields = new Set(['inputTemplate', 'inputPathsMap']);

/** place is where one problem goes: a node ("" for the graph) and the field there, if any. */
function place(tokens: string[], nodes: ChannelNodes): { id: string; field?: string; config?: string } {
  const [part, i, member, ...rest] = tokens;
  const at = index(i);
  switch (part) {
    case 'sources': {
      const id = at !== undefined ? nodes.sources[at] : undefined;
      if (!id) return { id: '' };
      // Source configs are flat: the whole rest is one key (a slash in it arrives as ~1).
      if (member === 'config' && rest.length > 0) return { id, config: rest.join('/') };
      return member === 'name' ? { id, field: 'name' } : { id };
    }
    case 'rule':
      if (i === 'eventPattern' && nodes.filter) return { id: nodes.filter, field: 'pattern' };
      if (i === 'name' || i === 'description') return { id: '', field: i };
      return { id: '' };
    case 'targets': {
      const t = at !== undefined ? nodes.targets[at] : undefined;
      if (!t) return { id: '' };
      if (member === 'inputTransformer' || member === 'input' || member === 'inputPath') {
        const field = member === 'inputTransformer' ? (transformerFields.has(rest[0]) ? rest[0] : undefined) : member;
        return t.transform ? { id: t.transform, ...(field ? { field } : {}) } : { id: t.id };
      }
      if (member === 'config' && rest.length > 0) {
        // A plugin's keys are flat; a built-in target's config is a structure: its first member is the field.
        return { id: t.id, config: t.plugin ? rest.join('/') : rest[0] };
      }
      if (member === 'retryPolicy' && retryFields.has(rest[0])) return { id: t.id, field: rest[0] };
      if (member === 'deadLetterConfig') return { id: t.id, field: 'deadLetterBus' };
      if (member === 'name') return { id: t.id, field: 'name' };
      return { id: t.id };
    }
    default:
      return { id: '' };
  }
}

/**
 * serverProblems places the errors of an InvalidChannel problem on the nodes of the graph that was saved (nodes:
 * its Conversion.nodes): /sources/i/… on the node of the i-th source sent, /rule/eventPattern on the filter,
 * /targets/i/inputTransformer…, /targets/i/input and /targets/i/inputPath on that target's transform (the target
 * when it has none), any other /targets/i/… on the i-th target; the rule's name and description, /targets (too
 * many) and any pointer it does not know go to the graph ("").
 */
export function serverProblems(errors: ProblemError[], nodes: ChannelNodes): ServerProblems {
  const out: ServerProblems = {};
  for (const e of errors) {
    const message = e.detail?.trim() || e.code || 'the server refused this part';
    const { id, field, config } = place(pointerTokens(e.pointer ?? ''), nodes);
    (out[id] ??= []).push({ message, ...(field ? { field } : {}), ...(config !== undefined ? { config } : {}) });
  }
  return out;
}

/**
 * fieldMessage is a problem's message as said under its field, which names the field already: the leading path
 * the server writes ('config.bus: bus "nowhere" does not exist') is left out, and a plain first word capitalised.
 */
export function fieldMessage(p: ServerProblem): string {
  const m = p.message.replace(/^[A-Za-z_][\w.\-[\]]*: (?=\S)/, '');
  // A plain first word is capitalised; a leading field path (config.url "x" must be …) is kept as written.
  return /^[a-z]+\s/.test(m) ? m.charAt(0).toUpperCase() + m.slice(1) : m;
}

/** fieldProblem is the message of the first of problems at field (or config key), if any. */
export function fieldProblem(problems: ServerProblem[] | undefined, at: { field?: string; config?: string }): string | undefined {
  const p = problems?.find((x) => (at.config !== undefined ? x.config === at.config : x.field === at.field));
  return p ? fieldMessage(p) : undefined;
}

/** configProblems are the messages of problems at config keys, by key: what the config form shows. */
export function configProblems(problems: ServerProblem[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of problems ?? []) if (p.config !== undefined) out[p.config] ??= fieldMessage(p);
  return out;
}

/** problemCount counts the problems of every node and of the graph. */
export function problemCount(ps: ServerProblems): number {
  return Object.values(ps).reduce((n, l) => n + l.length, 0);
}
