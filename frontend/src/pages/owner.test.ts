import { describe, expect, it } from 'vitest';
import { ownerOf } from './owner';

describe('ownerOf', () => {
  it.each([
    ['eb.default.orders.router', 'router of bus orders'],
    ['eb.default.orders.created.hook', 'target hook of rule created on bus orders'],
    ['eb.default.orders.source.tick', 'source tick of bus orders'],
    ['eb.default.orders.=replay.june', 'replay june of bus orders'],
    ['eb.default.my=2Eorders.created=2Fv1.web=2Ehook', 'target web.hook of rule created/v1 on bus my.orders'],
    ['eb.default.my=2Eorders.source.gh', 'source gh of bus my.orders'],
    ['eb.default.orders.tick', ''],
    ['eb.default.orders.a.b.c', ''],
    ['my-connector', ''],
    ['eb.x', ''],
  ])('%s → %s', (name, want) => {
    expect(ownerOf(name)).toBe(want);
  });
});
