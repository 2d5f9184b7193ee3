import { describe, expect, it } from 'vitest';
import { channelStatus, nodeStatus } from './status';
import type { NodeData } from './types';

const s = channelStatus(
  [
    { name: 'hook', type: 'http', status: { state: 'RUNNING', health: 'RETRYING', counters: { delivered: 1 } } },
    { name: 'fresh', type: 'log' },
  ],
  [{ name: 'tick', type: 'schedule', status: { state: 'RUNNING', health: 'HEALTHY' } }],
);
const target = (name: string): NodeData => ({ kind: 'target', targetType: 'http', plugin: false, name, config: {} });
const source = (name: string): NodeData => ({ kind: 'source', sourceType: 'schedule', name, config: {} });

describe('channelStatus', () => {
  it('indexes the statuses by name, leaving out what has none', () => {
    expect(Object.keys(s.targets)).toEqual(['hook']);
    expect(s.sources.tick.health).toBe('HEALTHY');
  });
});

describe('nodeStatus', () => {
  it.each([
    ['a saved target', 'target:hook', target('hook'), 'RETRYING'],
    ['a saved source', 'source:tick', source('tick'), 'HEALTHY'],
    ['a saved target renamed on the canvas', 'target:hook', target('hook2'), undefined],
    ['a target dropped from the palette with a saved name', 'target-3', target('hook'), undefined],
    ['a saved target without a status yet', 'target:fresh', target('fresh'), undefined],
    ['the bus', 'bus', { kind: 'bus', name: 'orders' } as NodeData, undefined],
  ])('%s', (_, id, data, health) => {
    expect(nodeStatus(s, id, data)?.health).toBe(health);
  });
  it('shows nothing before the first answer', () => {
    expect(nodeStatus(undefined, 'target:hook', target('hook'))).toBeUndefined();
  });
});
