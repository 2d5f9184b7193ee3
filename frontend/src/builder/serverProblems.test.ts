import { describe, expect, it } from 'vitest';
import { graphToApi, type ChannelNodes } from './convert';
import { configProblems, fieldMessage, fieldProblem, pointerTokens, problemCount, serverProblems, type ServerProblems } from './serverProblems';
import type { BuilderNode, NodeData } from './types';

// The nodes of a saved document: two sources sent (the second is node s3: s2 was unchanged and not sent), the
// filter, a built-in target with a transform, a plugin target and a target without a transform.
const nodes: ChannelNodes = {
  sources: ['s1', 's3'],
  filter: 'f1',
  targets: [
    { id: 't1', transform: 'x1', plugin: false },
    { id: 't2', plugin: true },
    { id: 't3', plugin: false },
  ],
};

const place = (pointer: string, detail = 'it is wrong') => serverProblems([{ pointer, detail, code: 'ValidationError' }], nodes);

describe('pointerTokens', () => {
  it.each([
    ['', []],
    ['/', ['']],
    ['/targets/0/config/url', ['targets', '0', 'config', 'url']],
    ['/sources/1/config/a~1b', ['sources', '1', 'config', 'a/b']],
    ['/sources/1/config/a~0b', ['sources', '1', 'config', 'a~b']],
    // ~01 is "~1" (RFC 6901: ~1 is read first, then ~0), not "/".
    ['/sources/1/config/a~01', ['sources', '1', 'config', 'a~1']],
  ])('reads %j', (pointer, tokens) => {
    expect(pointerTokens(pointer)).toEqual(tokens);
  });
});

describe('serverProblems', () => {
  const cases: { name: string; pointer: string; want: ServerProblems }[] = [
    {
      name: 'a source config key with dots, on the node of the source sent at that index',
      pointer: '/sources/1/config/http.signature.scheme',
      want: { s3: [{ message: 'it is wrong', config: 'http.signature.scheme' }] },
    },
    { name: 'an escaped source config key', pointer: '/sources/0/config/a~1b~0c', want: { s1: [{ message: 'it is wrong', config: 'a/b~c' }] } },
    { name: "a source's name", pointer: '/sources/0/name', want: { s1: [{ message: 'it is wrong', field: 'name' }] } },
    { name: "a source's type (no field)", pointer: '/sources/0/type', want: { s1: [{ message: 'it is wrong' }] } },
    { name: 'the event pattern, on the filter', pointer: '/rule/eventPattern', want: { f1: [{ message: 'it is wrong', field: 'pattern' }] } },
    { name: "the rule's name, on the graph", pointer: '/rule/name', want: { '': [{ message: 'it is wrong', field: 'name' }] } },
    { name: "the rule's description, on the graph", pointer: '/rule/description', want: { '': [{ message: 'it is wrong', field: 'description' }] } },
    { name: "the rule's layout, on the graph", pointer: '/rule/layout', want: { '': [{ message: 'it is wrong' }] } },
    { name: 'a built-in target config key', pointer: '/targets/0/config/url', want: { t1: [{ message: 'it is wrong', config: 'url' }] } },
    {
      name: "a member of a built-in target's config: its field",
      pointer: '/targets/0/config/headers/X-Team',
      want: { t1: [{ message: 'it is wrong', config: 'headers' }] },
    },
    { name: 'a plugin target config key, flat', pointer: '/targets/1/config/mqtt.topic~1x', want: { t2: [{ message: 'it is wrong', config: 'mqtt.topic/x' }] } },
    { name: 'a bus target naming a bus that does not exist', pointer: '/targets/2/config/bus', want: { t3: [{ message: 'it is wrong', config: 'bus' }] } },
    {
      name: 'the input template, on the transform',
      pointer: '/targets/0/inputTransformer/inputTemplate',
      want: { x1: [{ message: 'it is wrong', field: 'inputTemplate' }] },
    },
    {
      name: 'an input path of the map, on the transform',
      pointer: '/targets/0/inputTransformer/inputPathsMap/a',
      want: { x1: [{ message: 'it is wrong', field: 'inputPathsMap' }] },
    },
    { name: 'the constant input, on the transform', pointer: '/targets/0/input', want: { x1: [{ message: 'it is wrong', field: 'input' }] } },
    { name: 'the input path, on the transform', pointer: '/targets/0/inputPath', want: { x1: [{ message: 'it is wrong', field: 'inputPath' }] } },
    { name: 'an input transformer of a target without a transform node, on the target', pointer: '/targets/2/inputTransformer', want: { t3: [{ message: 'it is wrong' }] } },
    {
      name: 'the retry attempts',
      pointer: '/targets/1/retryPolicy/maximumRetryAttempts',
      want: { t2: [{ message: 'it is wrong', field: 'maximumRetryAttempts' }] },
    },
    { name: 'the dead-letter bus', pointer: '/targets/0/deadLetterConfig/bus', want: { t1: [{ message: 'it is wrong', field: 'deadLetterBus' }] } },
    { name: "a target's name", pointer: '/targets/2/name', want: { t3: [{ message: 'it is wrong', field: 'name' }] } },
    { name: 'too many targets, on the graph', pointer: '/targets', want: { '': [{ message: 'it is wrong' }] } },
    { name: 'a target index beyond those sent', pointer: '/targets/7/config/url', want: { '': [{ message: 'it is wrong' }] } },
    { name: 'an index that is not a number', pointer: '/sources/x/name', want: { '': [{ message: 'it is wrong' }] } },
    { name: 'an unknown member', pointer: '/createBus', want: { '': [{ message: 'it is wrong' }] } },
    { name: 'no pointer', pointer: '', want: { '': [{ message: 'it is wrong' }] } },
  ];
  it.each(cases)('places $name', ({ pointer, want }) => {
    expect(place(pointer)).toEqual(want);
  });

  it('puts the event pattern on the graph when there is no filter', () => {
    expect(serverProblems([{ pointer: '/rule/eventPattern', detail: 'bad' }], { sources: [], targets: [] })).toEqual({ '': [{ message: 'bad' }] });
  });

  it('keeps every problem of a node, in order, and says a problem without detail by its code', () => {
    const got = serverProblems(
      [
        { pointer: '/targets/0/config/url', detail: 'config.url "x" must be an absolute http or https URL' },
        { pointer: '/targets/0/deadLetterConfig/bus', code: 'ValidationError' },
        { pointer: '/targets', detail: 'a rule has at most 5 targets; 6 are listed' },
      ],
      nodes,
    );
    expect(got.t1.map((p) => p.message)).toEqual(['config.url "x" must be an absolute http or https URL', 'ValidationError']);
    expect(problemCount(got)).toBe(3);
  });

  it('places the problems of a converted graph on the nodes they came from', () => {
    const node = (id: string, data: NodeData): BuilderNode => ({ id, type: data.kind, position: { x: 0, y: 0 }, data });
    const c = graphToApi(
      {
        nodes: [
          node('src-old', { kind: 'source', sourceType: 'schedule', name: 'old', config: {}, saved: JSON.stringify({ name: 'old', type: 'schedule', config: {} }) }),
          node('src-new', { kind: 'source', sourceType: 'http', name: 'web', config: { 'http.signature.scheme': 'bogus' } }),
          node('bus', { kind: 'bus', name: 'orders' }),
          node('filter', { kind: 'filter', pattern: '{"type": ["a"]}' }),
          node('log-1', { kind: 'target', targetType: 'log', plugin: false, name: 'audit', config: {} }),
          node('bus-2', { kind: 'target', targetType: 'bus', plugin: false, name: 'forward', config: { bus: 'nowhere' } }),
        ],
        edges: [
          { id: 'a', source: 'src-old', target: 'bus' },
          { id: 'b', source: 'src-new', target: 'bus' },
          { id: 'c', source: 'bus', target: 'filter' },
          { id: 'd', source: 'filter', target: 'log-1' },
          { id: 'e', source: 'filter', target: 'bus-2' },
        ],
      },
      'created',
    );
    expect(c.errors).toEqual({});
    const got = serverProblems(
      [
        { pointer: '/sources/0/config/http.signature.scheme', detail: 'not one of none, github' },
        { pointer: '/targets/1/config/bus', detail: 'config.bus: bus "nowhere" does not exist' },
      ],
      c.nodes,
    );
    expect(Object.keys(got)).toEqual(['src-new', 'bus-2']);
  });
});

describe('field messages', () => {
  it.each([
    ['config.bus: bus "nowhere" does not exist', 'Bus "nowhere" does not exist'],
    ['config.http.signature.scheme: "bogus" is not one of none, github', '"bogus" is not one of none, github'],
    ['config.url "not a url" must be an absolute http or https URL', 'config.url "not a url" must be an absolute http or https URL'],
    ['invalid eventPattern: type: a pattern value must be an object', 'Invalid eventPattern: type: a pattern value must be an object'],
  ])('says %j as %j', (message, want) => {
    expect(fieldMessage({ message })).toBe(want);
  });

  it('finds the problem of a field and of config keys', () => {
    const ps = [
      { message: 'deadLetterConfig.bus: bus "x" does not exist', field: 'deadLetterBus' },
      { message: 'config.url: it is not a URL', config: 'url' },
      { message: 'config.url: said twice', config: 'url' },
    ];
    expect(fieldProblem(ps, { field: 'deadLetterBus' })).toBe('Bus "x" does not exist');
    expect(fieldProblem(ps, { field: 'name' })).toBeUndefined();
    expect(fieldProblem(undefined, { field: 'name' })).toBeUndefined();
    expect(configProblems(ps)).toEqual({ url: 'It is not a URL' });
  });
});
