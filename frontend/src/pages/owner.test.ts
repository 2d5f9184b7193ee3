import { describe, expect, it } from 'vitest';
import { ownerOf } from './owner';

describe('ownerOf', () => {
  it.each([
    ['eb.default.orders.router', 'router of bus orders'],
    ['eb.default.orders.created.hook', 'target hook of rule created on bus orders'],
    ['eb.default.orders.source.tick', 'source tick of bus orders'],
    ['eb.default.orders.tick', 'bus orders'],
    ['my-connector', ''],
    ['eb.x', ''],
  ])('%s → %s', (name, want) => {
    expect(ownerOf(name)).toBe(want);
  });
});
