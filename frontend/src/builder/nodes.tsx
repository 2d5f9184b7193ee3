import { Badge, Paper, Stack, Text } from '@mantine/core';
import { Handle, Position, type NodeProps, type NodeTypes } from '@xyflow/react';
import { HealthBadge, HealthLine } from '../components/Health';
import { countersText } from '../health';
import { transformModeLabel } from './labels';
import { useMemo } from 'react';
import { useNodeStatus } from './LiveStatus';
import { fieldMessage, type ServerProblem } from './serverProblems';
import { showsErrors, useBuilder } from './store';
import type { BuilderNode, NodeData } from './types';

const color: Record<NodeData['kind'], string> = { source: 'grape', bus: 'blue', filter: 'orange', transform: 'teal', target: 'green' };

function summary(d: NodeData): { title: string; sub: string } {
  switch (d.kind) {
    case 'source':
      return { title: d.name || `${d.sourceType} source`, sub: `${d.sourceType} source · shared by the bus's rules` };
    case 'bus':
      return { title: d.name || 'Bus', sub: 'bus' };
    case 'filter':
      return { title: 'Filter', sub: d.pattern.replace(/\s+/g, ' ').slice(0, 60) };
    case 'transform':
      return { title: 'Transform', sub: d.mode === 'path' ? `input path ${d.inputPath}` : transformModeLabel[d.mode] };
    case 'target':
      return { title: d.name || `${d.targetType} target`, sub: `${d.targetType} target${d.plugin ? ' (plugin)' : ''}${d.config.url ? ' · ' + d.config.url : ''}` };
  }
}

const none: string[] = [];
const noProblems: ServerProblem[] = [];
const same = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * useErrors are the node's errors: the graph's (from convert) and its form's (from its JSON Schema), once the
 * user touched the node or tried to save, then the server's of the last save (said once when the graph's say the
 * same).
 */
function useErrors(id: string): string[] {
  const own = useBuilder((s) => (showsErrors(s, id) ? (s.graphErrors[id] ?? none) : none));
  const server = useBuilder((s) => s.serverErrors[id] ?? noProblems);
  return useMemo(() => {
    if (server.length === 0) return own;
    const out = [...own];
    const known = new Set(own.map(same));
    for (const m of server.map(fieldMessage)) {
      if (!known.has(same(m))) out.push(m);
      known.add(same(m));
    }
    return out;
  }, [own, server]);
}

function ChannelNode({ id, data, selected }: NodeProps<BuilderNode>) {
  const errs = useErrors(id);
  const s = summary(data);
  const status = useNodeStatus(id, data);
  return (
    <Paper
      withBorder
      shadow={selected ? 'md' : 'xs'}
      p="xs"
      w={200}
      data-testid={`node-${data.kind}`}
      data-node-name={'name' in data ? data.name : data.kind}
      style={{ borderColor: errs.length > 0 ? 'var(--mantine-color-red-6)' : selected ? 'var(--mantine-color-blue-6)' : undefined, borderWidth: errs.length > 0 || selected ? 2 : 1 }}
    >
      {data.kind !== 'source' && <Handle type="target" position={Position.Left} />}
      <Stack gap={2}>
        <Badge size="xs" color={color[data.kind]} variant="light">
          {data.kind}
        </Badge>
        <Text size="sm" fw={600} truncate>
          {s.title}
        </Text>
        <Text size="xs" c="dimmed" lineClamp={2}>
          {s.sub}
        </Text>
        {status && (
          <Stack gap={2} data-testid={`${data.kind}-health`}>
            <HealthBadge health={status.health} size="xs" />
            <HealthLine facts={status} details={false} size="xs" idle="" lineClamp={3} />
            <Text size="xs" data-testid={`${data.kind}-status`} title="Since it was created">
              {countersText(status.counters)}
            </Text>
          </Stack>
        )}
        {errs.map((e) => (
          <Text key={e} size="xs" c="red" data-testid="node-error">
            {e.charAt(0).toUpperCase() + e.slice(1)}
          </Text>
        ))}
      </Stack>
      {data.kind !== 'target' && <Handle type="source" position={Position.Right} />}
    </Paper>
  );
}

/** nodeTypes is a module constant, as React Flow requires (a new object each render remounts every node). */
export const nodeTypes: NodeTypes = {
  source: ChannelNode,
  bus: ChannelNode,
  filter: ChannelNode,
  transform: ChannelNode,
  target: ChannelNode,
};
