/** Names of the builder's nodes in words, for people and screen readers. Pure. */
import type { NodeData, TransformMode } from './types';

export const transformModeLabel: Record<TransformMode, string> = { template: 'input template', constant: 'constant input', path: 'input path' };

/**
 * nodeAriaLabel names a node for a screen reader, which reaches it with Tab: "Target hook (http)", "Source
 * (schedule)" while it has no name yet.
 */
export function nodeAriaLabel(d: NodeData): string {
  const named = (kind: string, name: string, type?: string) => [kind, name, type && `(${type})`].filter(Boolean).join(' ');
  switch (d.kind) {
    case 'source':
      return named('Source', d.name, d.sourceType);
    case 'bus':
      return named('Bus', d.name);
    case 'filter':
      return 'Filter';
    case 'transform':
      return named('Transform', '', transformModeLabel[d.mode]);
    case 'target':
      return named('Target', d.name, d.targetType);
  }
}
