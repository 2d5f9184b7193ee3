import { describe, expect, it } from 'vitest';
import { buildPalette, sourceConfigOmitted, targetConfigOmitted } from './palette';

// What the embedded worker answers on GET /api/v1/runtime/plugins, plus a plugin the console has never heard of.
const plugins = [
  { class: 'eventbus', type: 'sink' },
  { class: 'eventbus-source', type: 'source' },
  { class: 'http', type: 'sink' },
  { class: 'http-source', type: 'source' },
  { class: 'log', type: 'sink' },
  { class: 'mqtt', type: 'sink' },
  { class: 'mqtt-source', type: 'source' },
  { class: 'router', type: 'sink' },
  { class: 'schedule-source', type: 'source' },
  { class: 'zeromq', type: 'sink' },
];

describe('buildPalette', () => {
  const groups = Object.fromEntries(buildPalette(plugins).map((g) => [g.title, g.items]));

  it('offers every source plugin by its type', () => {
    expect(groups.Sources.map((i) => i.type)).toEqual(['eventbus', 'http', 'mqtt', 'schedule']);
  });

  it('offers the built-in target types and every other sink plugin', () => {
    expect(groups.Targets.map((i) => [i.type, i.plugin])).toEqual([
      ['http', false],
      ['api-destination', false],
      ['bus', false],
      ['log', false],
      ['mqtt', true],
      ['zeromq', true],
    ]);
  });

  it('labels every item in sentence case', () => {
    expect(groups.Sources.map((i) => i.label)).toEqual(['Eventbus source', 'HTTP source', 'MQTT source', 'Schedule source']);
    expect(groups.Targets.map((i) => i.label)).toEqual(['HTTP', 'API destination', 'Bus', 'Log', 'MQTT (plugin)', 'Zeromq (plugin)']);
  });

  it('offers no plugin target without plugins', () => {
    const g = Object.fromEntries(buildPalette([]).map((x) => [x.title, x.items]));
    expect(g.Sources).toEqual([]);
    expect(g.Targets.every((i) => !i.plugin)).toBe(true);
  });
});

describe('config keys the control plane sets', () => {
  it.each([
    ['topics', true],
    ['jetstream.durable', true],
    ['errors.retry.max.attempts', true],
    ['mqtt.url', false],
  ])('target key %s omitted: %s', (k, want) => {
    expect(targetConfigOmitted(k)).toBe(want);
  });
  it.each([
    ['output.subject', 'schedule', true],
    ['source.subject', 'http', true],
    ['source.subject', 'mqtt', false],
    ['schedule.expression', 'schedule', false],
  ])('source key %s of %s omitted: %s', (k, t, want) => {
    expect(sourceConfigOmitted(k, t)).toBe(want);
  });
});
