import '@xyflow/react/dist/style.css';
import { Alert, Box, Button, Group, Paper, ScrollArea, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Background, Controls, MiniMap, ReactFlow, ReactFlowProvider, useReactFlow } from '@xyflow/react';
import { useCallback, useEffect, useMemo, type DragEvent } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { api, enc, type Rule, type Schemas } from '../api/client';
import { ErrorAlert, QueryState } from '../components/states';
import { validateValues } from '../forms/schemaForm';
import { apiToGraph, graphToApi } from './convert';
import { nodeTypes } from './nodes';
import { buildPalette } from './palette';
import { saveChannel } from './save';
import { configFields, pluginClassOf, usePluginSchemas } from './schemas';
import { SidePanel } from './SidePanel';
import { useBuilder } from './store';
import { DND_MIME, type NodeData, type PaletteItem } from './types';

/** newNodeData is the data of a node dropped from the palette. */
function newNodeData(item: PaletteItem): NodeData {
  switch (item.kind) {
    case 'source':
      return { kind: 'source', sourceType: item.type ?? '', name: '', config: {} };
    case 'bus':
      return { kind: 'bus', name: '' };
    case 'filter':
      return { kind: 'filter', pattern: '{\n  "type": ["order.created"]\n}' };
    case 'transform':
      return { kind: 'transform', mode: 'template', inputPathsMap: '{\n  "id": "$.data.id"\n}', inputTemplate: '{"order": <id>}', input: '', inputPath: '' };
    case 'target':
      return { kind: 'target', targetType: item.type ?? '', plugin: item.plugin ?? false, name: '', config: {} };
  }
}

function Palette() {
  const plugins = useQuery({ queryKey: ['plugins'], queryFn: () => api<Schemas['RuntimePluginList']>('/runtime/plugins'), staleTime: 60_000 });
  const onDragStart = (e: DragEvent, item: PaletteItem) => {
    e.dataTransfer.setData(DND_MIME, JSON.stringify(item));
    e.dataTransfer.effectAllowed = 'move';
  };
  return (
    <Stack gap="xs" data-testid="palette">
      <QueryState query={plugins}>
        {(d) =>
          buildPalette(d.plugins ?? []).map((g) => (
            <Box key={g.title}>
              <Text size="xs" fw={700} c="dimmed" tt="uppercase">
                {g.title}
              </Text>
              {g.items.length === 0 && (
                <Text size="xs" c="dimmed">
                  none in this runtime
                </Text>
              )}
              {g.items.map((i) => (
                <Paper
                  key={`${i.kind}:${i.type ?? ''}`}
                  withBorder
                  p={6}
                  my={4}
                  draggable
                  onDragStart={(e) => onDragStart(e, i)}
                  style={{ cursor: 'grab' }}
                  data-testid={`palette-${i.kind}${i.type ? '-' + i.type : ''}`}
                >
                  <Text size="sm">{i.label}</Text>
                </Paper>
              ))}
            </Box>
          ))
        }
      </QueryState>
    </Stack>
  );
}

function Canvas() {
  const { nodes, edges, onNodesChange, onEdgesChange, onConnect, addNode, select, existing } = useBuilder();
  const { screenToFlowPosition } = useReactFlow();
  const onDragOver = useCallback((e: DragEvent) => {
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
  }, []);
  const onDrop = useCallback(
    (e: DragEvent) => {
      e.preventDefault();
      const raw = e.dataTransfer.getData(DND_MIME);
      if (!raw) return;
      const item = JSON.parse(raw) as PaletteItem;
      addNode(newNodeData(item), screenToFlowPosition({ x: e.clientX, y: e.clientY }));
    },
    [addNode, screenToFlowPosition],
  );
  return (
    <Box style={{ flex: 1, minHeight: 560 }} data-testid="canvas">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onDrop={onDrop}
        onDragOver={onDragOver}
        onNodeClick={(_, n) => select(n.id)}
        onPaneClick={() => select(undefined)}
        deleteKeyCode={['Delete', 'Backspace']}
        // A saved channel is fitted into view when it opens; a new one keeps the viewport its drops are made in.
        fitView={existing}
        fitViewOptions={{ maxZoom: 1 }}
      >
        <Background />
        <Controls />
        <MiniMap pannable zoomable />
      </ReactFlow>
    </Box>
  );
}

/** useLoad loads /builder/:bus/:rule into the store, or starts an empty graph at /builder. */
function useLoad(bus?: string, rule?: string) {
  const load = useBuilder((s) => s.load);
  const q = useQuery({
    queryKey: ['channel', bus, rule],
    enabled: !!bus && !!rule,
    queryFn: async () => {
      const base = `/buses/${enc(bus!)}`;
      const [r, t, s] = await Promise.all([
        api<Rule>(`${base}/rules/${enc(rule!)}`),
        api<Schemas['TargetList']>(`${base}/rules/${enc(rule!)}/targets`),
        api<Schemas['SourceList']>(`${base}/sources`, { query: { limit: 500 } }),
      ]);
      return { rule: r, targets: t.targets ?? [], sources: s.sources ?? [] };
    },
  });
  useEffect(() => {
    if (!bus || !rule) load({ nodes: [], edges: [] }, '', '', false);
  }, [bus, rule, load]);
  useEffect(() => {
    if (q.data && bus) load(apiToGraph(bus, q.data.rule, q.data.targets, q.data.sources), q.data.rule.name ?? '', q.data.rule.description ?? '', true);
  }, [q.data, bus, load]);
  return q;
}

function Builder() {
  const params = useParams();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const loaded = useLoad(params.bus, params.rule);
  const { nodes, edges, ruleName, description, existing, setRule, setGraphErrors } = useBuilder();
  const graphErrors = useBuilder((s) => s.graphErrors);
  const { schemas, errors: schemaErrors } = usePluginSchemas(nodes.map((n) => pluginClassOf(n.data)).filter((c): c is string => !!c));

  const conversion = useMemo(() => graphToApi({ nodes, edges }, ruleName, description), [nodes, edges, ruleName, description]);
  // Node errors: the graph's (convert) and each form's (its JSON Schema).
  const errors = useMemo(() => {
    const all: Record<string, string[]> = {};
    for (const [id, errs] of Object.entries(conversion.errors)) all[id] = [...errs];
    for (const n of nodes) {
      const fields = configFields(n.data, schemas);
      if (!fields || (n.data.kind !== 'source' && n.data.kind !== 'target')) continue;
      const fe = Object.values(validateValues(fields, n.data.config));
      if (fe.length > 0) (all[n.id] ??= []).push(...fe.filter((m) => !(all[n.id] ?? []).some((x) => x.includes(m))));
    }
    return all;
  }, [conversion, nodes, schemas]);
  useEffect(() => setGraphErrors(errors), [errors, setGraphErrors]);
  const errorCount = Object.values(errors).reduce((a, e) => a + e.length, 0);

  const save = useMutation({
    mutationFn: () => saveChannel(conversion, existing, (loaded.data?.targets ?? []).map((t) => t.name ?? '')),
    onSuccess: async () => {
      await qc.invalidateQueries({ queryKey: ['channel', conversion.bus, conversion.rule.name] });
      await qc.invalidateQueries({ queryKey: ['rules'] });
      navigate(`/builder/${enc(conversion.bus)}/${enc(conversion.rule.name ?? '')}`, { replace: true });
    },
  });

  if (loaded.isError) return <ErrorAlert error={loaded.error} title="Could not load the rule" />;
  return (
    <Stack h="calc(100vh - 90px)" gap="xs">
      <Group justify="space-between" align="flex-end">
        <Group align="flex-end">
          <Title order={3}>Channel builder</Title>
          <TextInput label="Rule name" value={ruleName} onChange={(e) => setRule(e.currentTarget.value, description)} disabled={existing} withAsterisk aria-label="Rule name" />
          <TextInput label="Description" value={description} onChange={(e) => setRule(ruleName, e.currentTarget.value)} w={280} />
        </Group>
        <Group>
          {errorCount > 0 && (
            <Text size="sm" c="red" data-testid="error-count">
              {errorCount} problem{errorCount > 1 ? 's' : ''} to fix
            </Text>
          )}
          <Button onClick={() => save.mutate()} disabled={errorCount > 0} loading={save.isPending}>
            Save
          </Button>
        </Group>
      </Group>
      {(graphErrors[''] ?? []).length > 0 && (
        <Alert color="yellow" p="xs" data-testid="graph-errors">
          {(graphErrors[''] ?? []).join('; ')}.
        </Alert>
      )}
      <ErrorAlert error={save.error} title="Not saved" />
      {save.isSuccess && (
        <Text size="sm" c="green" data-testid="saved">
          Saved.
        </Text>
      )}
      <Group align="stretch" gap="xs" style={{ flex: 1, minHeight: 0 }} wrap="nowrap">
        <ScrollArea w={190} style={{ flexShrink: 0 }}>
          <Palette />
        </ScrollArea>
        {loaded.isLoading ? <Text>Loading the rule…</Text> : <Canvas />}
        <ScrollArea w={340} style={{ flexShrink: 0 }}>
          <Paper withBorder p="sm">
            <SidePanel schemas={schemas} schemaErrors={schemaErrors} />
          </Paper>
        </ScrollArea>
      </Group>
    </Stack>
  );
}

export function BuilderPage() {
  return (
    <ReactFlowProvider>
      <Builder />
    </ReactFlowProvider>
  );
}
