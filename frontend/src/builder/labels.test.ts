import { describe, expect, it } from 'vitest';
import { nodeAriaLabel } from './labels';
import type { NodeData } from './types';

describe('nodeAriaLabel', () => {
  it.each<[NodeData, string]>([
    [{ kind: 'target', targetType: 'http', plugin: false, name: 'hook', config: {} }, 'Target hook (http)'],
    [{ kind: 'target', targetType: 'mqtt', plugin: true, name: '', config: {} }, 'Target (mqtt)'],
    [{ kind: 'source', sourceType: 'schedule', name: 'tick', config: {} }, 'Source tick (schedule)'],
    [{ kind: 'bus', name: 'orders' }, 'Bus orders'],
    [{ kind: 'bus', name: '' }, 'Bus'],
    [{ kind: 'filter', pattern: '{}' }, 'Filter'],
    [{ kind: 'transform', mode: 'constant', inputPathsMap: '', inputTemplate: '', input: '{}', inputPath: '' }, 'Transform (constant input)'],
  ])('names %j "%s"', (d, want) => {
    expect(nodeAriaLabel(d)).toBe(want);
  });
});
