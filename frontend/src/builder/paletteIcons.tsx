import {
  IconFilter,
  IconLogin2,
  IconLogs,
  IconPuzzle,
  IconTopologyBus,
  IconTransform,
  IconWebhook,
  IconWorldUpload,
  type Icon,
} from '@tabler/icons-react';
import type { PaletteItem } from './types';

/**
 * paletteIcon is the icon of a palette entry, after its kind and, for a target, its type: a bus target looks like a
 * bus, a plugin's target like a puzzle piece. Sources share one icon (their label says which plugin). Kept apart
 * from palette.ts, which stays pure data.
 */
export function paletteIcon(item: PaletteItem): Icon {
  switch (item.kind) {
    case 'source':
      return IconLogin2;
    case 'bus':
      return IconTopologyBus;
    case 'filter':
      return IconFilter;
    case 'transform':
      return IconTransform;
    case 'target':
      if (item.plugin) return IconPuzzle;
      return targetIcons[item.type ?? ''] ?? IconPuzzle;
  }
}

const targetIcons: Record<string, Icon> = {
  http: IconWorldUpload,
  'api-destination': IconWebhook,
  bus: IconTopologyBus,
  log: IconLogs,
};
