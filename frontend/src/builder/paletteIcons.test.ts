import { IconLogin2, IconPuzzle, IconTopologyBus, IconWebhook, IconWorldUpload } from '@tabler/icons-react';
import { describe, expect, it } from 'vitest';
import { buildPalette } from './palette';
import { paletteIcon } from './paletteIcons';

describe('paletteIcon', () => {
  const items = buildPalette([
    { class: 'http-source', type: 'source' },
    { class: 'mqtt', type: 'sink' },
  ]).flatMap((g) => g.items);
  const icon = (label: string) => paletteIcon(items.find((i) => i.label === label)!);

  it('gives every palette entry an icon', () => {
    for (const i of items) expect(paletteIcon(i), i.label).toBeTypeOf('object');
  });
  it('picks it by kind and, for a target, by type', () => {
    expect(icon('HTTP source')).toBe(IconLogin2);
    expect(icon('Bus')).toBe(IconTopologyBus);
    expect(icon('HTTP')).toBe(IconWorldUpload);
    expect(icon('API destination')).toBe(IconWebhook);
    expect(icon('MQTT (plugin)')).toBe(IconPuzzle);
  });
  it('shows a target type it does not know as a plugin', () => {
    expect(paletteIcon({ kind: 'target', type: 'new-kind', plugin: false, label: 'New kind' })).toBe(IconPuzzle);
  });
});
