import '@xyflow/react/dist/style.css';
import { ActionIcon, Alert, Box, Button, Group, Modal, Paper, ScrollArea, Stack, Switch, Text, TextInput, Title, useComputedColorScheme } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { IconArrowBackUp, IconArrowForwardUp, IconLayoutDistributeHorizontal } from '@tabler/icons-react';
import { Background, Controls, MarkerType, MiniMap, ReactFlow, ReactFlowProvider, useReactFlow, type DefaultEdgeOptions } from '@xyflow/react';
import { useElementSize, useMediaQuery, useMergedRef } from '@mantine/hooks';
import { useCallback, useEffect, useMemo, useRef, useState, type CSSProperties, type DragEvent, type KeyboardEvent, type RefObject } from 'react';
import { useBlocker, useNavigate, useParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ApiError } from '../api/problem';
import { ErrorAlert, QueryState } from '../components/states';
import { validateValues } from '../forms/schemaForm';
import { apiToGraph, graphToApi, type Conversion } from './convert';
import { conversionKey, graphKey, ruleState } from './dirty';
import { nodeAriaLabel } from './labels';
import { autoLayout } from './layout';
import { LiveStatus } from './LiveStatus';
import { nodeTypes } from './nodes';
import { buildPalette } from './palette';
import { paletteIcon } from './paletteIcons';
import { saveChannel, type Channel } from './save';
import { configFields, pluginClassOf, usePluginSchemas } from './schemas';
import { editsText, historyShortcut } from './shortcuts';
import { fieldProblem, problemCount, serverProblems } from './serverProblems';
import { SidePanel } from './SidePanel';
import { isDirty, shownErrors, useBuilder } from './store';
import { DND_MIME, type BuilderNode, type NodeData, type PaletteItem } from './types';

const sameWords = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');
/** sentence starts a message of the graph's check (written to be joined: "the rule needs a name") with a capital. */
const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

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

/**
 * Palette lists what can be added to the channel. An item is dragged onto the canvas, or tapped (clicked, or
 * Enter or Space on it) to add it in the middle of the canvas: touch screens do not drag. For the keyboard it is
 * a toolbar, one stop of Tab, its items reached with the arrow keys (a roving tabindex).
 */
function Palette({ onPick }: { onPick: (item: PaletteItem) => void }) {
  const plugins = useQuery({ queryKey: ['plugins'], queryFn: () => api<Schemas['RuntimePluginList']>('/runtime/plugins'), staleTime: 60_000 });
  const [active, setActive] = useState(0);
  const items = useRef<(HTMLElement | null)[]>([]);
  const onDragStart = (e: DragEvent, item: PaletteItem) => {
    e.dataTransfer.setData(DND_MIME, JSON.stringify(item));
    e.dataTransfer.effectAllowed = 'move';
  };
  const onKeyDown = (e: KeyboardEvent, at: number, item: PaletteItem) => {
    const count = items.current.length;
    const to = { ArrowDown: (at + 1) % count, ArrowUp: (at - 1 + count) % count, Home: 0, End: count - 1 }[e.key];
    if (to !== undefined) {
      e.preventDefault();
      setActive(to);
      items.current[to]?.focus();
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onPick(item);
    }
  };
  return (
    <Stack gap="xs" data-testid="palette" role="toolbar" aria-orientation="vertical" aria-label="Add to the channel">
      <QueryState query={plugins}>
        {(d) => {
          const groups = buildPalette(d.plugins ?? []);
          const total = groups.reduce((n, g) => n + g.items.length, 0);
          items.current.length = total;
          // The one item Tab stops at: the last one focused, while the list still has it.
          const stop = Math.min(active, total - 1);
          let index = 0;
          return groups.map((g) => (
            <Box key={g.title}>
              <Text size="xs" fw={700} c="dimmed" tt="uppercase">
                {g.title}
              </Text>
              {g.items.length === 0 && (
                <Text size="xs" c="dimmed">
                  None in this runtime
                </Text>
              )}
              {g.items.map((i) => {
                const at = index++;
                return (
                  <Paper
                    key={`${i.kind}:${i.type ?? ''}`}
                    ref={(el: HTMLDivElement | null) => {
                      items.current[at] = el;
                    }}
                    withBorder
                    p={6}
                    my={4}
                    draggable
                    onDragStart={(e) => onDragStart(e, i)}
                    role="button"
                    tabIndex={at === stop ? 0 : -1}
                    title="Drag onto the canvas, or click it (Enter) to add it"
                    onClick={() => onPick(i)}
                    onFocus={() => setActive(at)}
                    onKeyDown={(e: KeyboardEvent) => onKeyDown(e, at, i)}
                    style={{ cursor: 'grab' }}
                    data-testid={`palette-${i.kind}${i.type ? '-' + i.type : ''}`}
                  >
                    <PaletteEntry item={i} />
                  </Paper>
                );
              })}
            </Box>
          ));
        }}
      </QueryState>
    </Stack>
  );
}

/** PaletteEntry is a palette item's icon (decorative: the label names it) and label. */
function PaletteEntry({ item }: { item: PaletteItem }) {
  const I = paletteIcon(item);
  return (
    <Group gap={6} wrap="nowrap">
      <I size={16} stroke={1.6} aria-hidden style={{ flexShrink: 0 }} />
      <Text size="sm">{item.label}</Text>
    </Group>
  );
}

// Edges are drawn in a grey of at least 3:1 against the canvas in either scheme (WCAG's contrast of graphics),
// with an arrowhead that says which way events go. Through React Flow's variables, not an edge's style: an inline
// stroke would hide the colour of a selected edge.
const edgeStroke = { light: 'var(--mantine-color-gray-7)', dark: 'var(--mantine-color-dark-1)' } as const;

function edgeStyle(scheme: 'light' | 'dark'): CSSProperties {
  return {
    '--xy-edge-stroke': edgeStroke[scheme],
    '--xy-edge-stroke-width': 2,
    '--xy-edge-stroke-selected': 'var(--mantine-color-blue-6)',
    '--xy-connectionline-stroke': edgeStroke[scheme],
    '--xy-connectionline-stroke-width': 2,
  } as CSSProperties;
}

const edgeOptions = (scheme: 'light' | 'dark'): DefaultEdgeOptions => ({ markerEnd: { type: MarkerType.ArrowClosed, color: edgeStroke[scheme], width: 16, height: 16 } });

// Below this width the minimap would cover the nodes it maps.
const MINIMAP_MIN_WIDTH = 700;

// Nodes as React Flow draws them, named for screen readers: one object per node object, so an unchanged node
// stays the same object and is not drawn again.
const labelled = new WeakMap<BuilderNode, BuilderNode>();
function withAriaLabel(n: BuilderNode): BuilderNode {
  let l = labelled.get(n);
  if (!l) {
    l = { ...n, ariaLabel: nodeAriaLabel(n.data) };
    labelled.set(n, l);
  }
  return l;
}

/** Canvas is the graph; read-only, it can be panned and zoomed but not changed. */
function Canvas({ readOnly = false, boxRef, height }: { readOnly?: boolean; boxRef?: RefObject<HTMLDivElement | null>; height?: string | number }) {
  const { nodes, edges, onNodesChange, onEdgesChange, onConnect, addNode, select, existing } = useBuilder();
  const { screenToFlowPosition } = useReactFlow();
  const { ref: sizeRef, width } = useElementSize<HTMLDivElement>();
  const ref = useMergedRef(boxRef, sizeRef);
  // React Flow draws its canvas, controls and minimap in the console's scheme.
  const colorMode = useComputedColorScheme('light', { getInitialValueInEffect: false });
  const shown = useMemo(() => nodes.map(withAriaLabel), [nodes]);
  const defaultEdgeOptions = useMemo(() => edgeOptions(colorMode), [colorMode]);
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
    <Box ref={ref} style={{ flex: 1, minWidth: 0, minHeight: height ?? 560, height }} data-testid="canvas">
      <ReactFlow
        nodes={shown}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={readOnly ? undefined : onConnect}
        onDrop={readOnly ? undefined : onDrop}
        onDragOver={readOnly ? undefined : onDragOver}
        onNodeClick={readOnly ? undefined : (_, n) => select(n.id)}
        onPaneClick={() => select(undefined)}
        colorMode={colorMode}
        style={edgeStyle(colorMode)}
        defaultEdgeOptions={defaultEdgeOptions}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        // Tab reaches each node, Enter selects it (its side panel opens), Delete removes it, the arrows move it.
        nodesFocusable
        elementsSelectable={!readOnly}
        deleteKeyCode={readOnly ? null : ['Delete', 'Backspace']}
        // A saved channel is fitted into view when it opens; a new one keeps the viewport its drops are made in.
        fitView={existing || readOnly}
        fitViewOptions={{ maxZoom: 1 }}
        // Far enough out to fit a whole channel on a phone's read-only canvas.
        minZoom={0.25}
      >
        <Background />
        <Controls showInteractive={!readOnly} />
        {!readOnly && width >= MINIMAP_MIN_WIDTH && <MiniMap pannable zoomable position="top-right" style={{ width: 150, height: 100 }} />}
      </ReactFlow>
    </Box>
  );
}

/**
 * useLoad loads /builder/:bus/:rule into the store with one GET of the channel API (the rule, its targets and its
 * bus's sources, read at one moment), or starts an empty graph at /builder. A rule is loaded when it opens; the
 * channel read again (after a save) is loaded only over a canvas without unsaved changes, and only when it differs.
 */
function useLoad(bus?: string, rule?: string) {
  const load = useBuilder((s) => s.load);
  const shown = useRef<string | undefined>(undefined);
  const q = useQuery({
    queryKey: ['channel', bus, rule],
    enabled: !!bus && !!rule,
    queryFn: () => api<Channel>(`/buses/${enc(bus!)}/channels/${enc(rule!)}`),
  });
  useEffect(() => {
    if (!bus || !rule) {
      shown.current = undefined;
      load({ nodes: [], edges: [] }, '', '', false);
    }
  }, [bus, rule, load]);
  useEffect(() => {
    if (!q.data || !bus || !rule) return;
    const r = q.data.rule ?? {};
    const next = { ...apiToGraph(bus, r, q.data.targets ?? [], q.data.sources ?? []), ruleName: r.name ?? rule, description: r.description ?? '', enabled: r.state !== 'DISABLED' };
    const s = useBuilder.getState();
    const opened = shown.current === `${bus}/${rule}`;
    if (opened && (isDirty(s) || graphKey(s) === graphKey(next))) return;
    shown.current = `${bus}/${rule}`;
    load(next, next.ruleName, next.description, true, next.enabled);
  }, [q.data, bus, rule, load]);
  return q;
}

/**
 * UnsavedGuard asks before the user leaves a channel with unsaved changes: a link or the back button inside the
 * console opens its modal (react-router's blocker), a reload or closing the tab the browser's own question
 * (beforeunload). A navigation with state {saved: true} (the builder's own after a save) passes.
 */
function UnsavedGuard({ dirty }: { dirty: boolean }) {
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      currentLocation.pathname !== nextLocation.pathname && !(nextLocation.state as { saved?: boolean } | null)?.saved && isDirty(useBuilder.getState()),
  );
  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = ''; // older browsers ask only with it set
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [dirty]);
  return (
    <Modal opened={blocker.state === 'blocked'} onClose={() => blocker.reset?.()} title="Leave without saving?" centered>
      <Stack>
        <Text size="sm">Your changes to this channel will be lost.</Text>
        <Group justify="flex-end" gap="xs">
          <Button variant="default" onClick={() => blocker.reset?.()} data-autofocus>
            Stay
          </Button>
          <Button color="red" onClick={() => blocker.proceed?.()}>
            Leave
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function Builder() {
  const params = useParams();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const loaded = useLoad(params.bus, params.rule);
  const { nodes, edges, ruleName, description, enabled, existing, setRule, setEnabled, setGraphErrors, addNode, arrange, attemptSave } = useBuilder();
  const { undo, redo, canUndo, canRedo, touched, attempted, serverErrors, setServerErrors, markSaved, baseline } = useBuilder();
  const { screenToFlowPosition, fitView } = useReactFlow();
  // A phone's screen is too small to build on: there the builder shows the channel and changes nothing. Below
  // the lg breakpoint the side panel goes under the canvas, which keeps the width.
  const phone = useMediaQuery('(max-width: 47.99em)', false, { getInitialValueInEffect: false });
  const compact = useMediaQuery('(max-width: 74.99em)', false, { getInitialValueInEffect: false });
  const canvasRef = useRef<HTMLDivElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  const focusPanel = useRef(false);
  // A picked palette item lands in the middle of the canvas, each next one a little lower and to the right.
  const pick = useCallback(
    (item: PaletteItem) => {
      const r = canvasRef.current?.getBoundingClientRect();
      if (!r) return;
      const shift = (nodes.length % 8) * 24;
      addNode(newNodeData(item), screenToFlowPosition({ x: r.left + r.width / 2 - 100 + shift, y: r.top + r.height / 2 - 40 + shift }));
      focusPanel.current = true;
    },
    [addNode, nodes.length, screenToFlowPosition],
  );
  // After a pick the side panel shows the new node: its first field takes the focus, the user types its name
  // at once. A node dropped with the mouse leaves the focus where it is.
  const selected = useBuilder((s) => s.selected);
  useEffect(() => {
    if (!focusPanel.current) return;
    focusPanel.current = false;
    panelRef.current?.querySelector<HTMLElement>('input:not([type=hidden]):not([disabled]):not([readonly]), textarea:not([disabled]):not([readonly])')?.focus();
  }, [selected]);
  // Undo and redo for the whole page, except in a text field, which undoes its own typing.
  useEffect(() => {
    if (phone) return;
    const onKey = (e: globalThis.KeyboardEvent) => {
      const action = historyShortcut(e);
      if (!action || editsText(e.target as HTMLElement | null)) return;
      e.preventDefault();
      if (action === 'undo') undo();
      else redo();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [phone, undo, redo]);
  const tidy = useMutation({
    mutationFn: async () => {
      const g = await autoLayout({ nodes, edges });
      arrange(Object.fromEntries(g.nodes.map((n) => [n.id, n.position])));
      // Once the canvas has the new positions.
      requestAnimationFrame(() => void fitView({ maxZoom: 1, duration: 300 }));
    },
  });
  const { schemas, errors: schemaErrors } = usePluginSchemas(nodes.map((n) => pluginClassOf(n.data)).filter((c): c is string => !!c));

  const state = ruleState(enabled);
  const conversion = useMemo(() => graphToApi({ nodes, edges }, ruleName, description, state), [nodes, edges, ruleName, description, state]);
  // Unsaved: saving would send something else than what was loaded or last saved (positions included).
  const dirty = useMemo(() => conversionKey(conversion) !== baseline, [conversion, baseline]);
  // Node errors: the graph's (convert) and each form's (its JSON Schema).
  const errors = useMemo(() => {
    const all: Record<string, string[]> = {};
    for (const [id, errs] of Object.entries(conversion.errors)) all[id] = [...errs];
    for (const n of nodes) {
      const fields = configFields(n.data, schemas);
      if (!fields || (n.data.kind !== 'source' && n.data.kind !== 'target')) continue;
      const fe = Object.values(validateValues(fields, n.data.config));
      // The graph's check and the form's may say the same thing in other words ("url is required", "URL is
      // required"): compared without case, spaces and punctuation, it is said once, in the form's words.
      for (const m of fe) {
        const errs = (all[n.id] ??= []);
        const same = errs.findIndex((x) => sameWords(x) === sameWords(m));
        if (same >= 0) errs[same] = m;
        else if (!errs.some((x) => sameWords(x).includes(sameWords(m)))) errs.push(m);
      }
    }
    return all;
  }, [conversion, nodes, schemas]);
  useEffect(() => setGraphErrors(errors), [errors, setGraphErrors]);
  const errorCount = Object.values(errors).reduce((a, e) => a + e.length, 0);
  // The problems the graph's check finds and those the server found in the last save: said together.
  const problems = errorCount + problemCount(serverErrors);
  const graphErrors = [...(shownErrors({ graphErrors: errors, touched, attempted })[''] ?? []), ...(serverErrors[''] ?? []).map((p) => p.message)];

  const save = useMutation({
    mutationFn: (c: Conversion) => saveChannel(c),
    onMutate: () => setServerErrors({}),
    onSuccess: (ch: Channel, c: Conversion) => {
      markSaved(conversionKey(c));
      const path = [c.bus, c.rule.name ?? ''] as const;
      // The answer is the channel as stored: the canvas loads it (saved sources, webhook URLs) without reading it again.
      qc.setQueryData(['channel', ...path], ch);
      for (const key of ['channel-status', 'rules', 'targets', 'sources', 'buses']) void qc.invalidateQueries({ queryKey: [key] });
      navigate(`/builder/${enc(path[0])}/${enc(path[1])}`, { replace: true, state: { saved: true } });
    },
    onError: (e: unknown, c: Conversion) => {
      // A document with problems: each on its node and field, as the graph's own are.
      if (e instanceof ApiError && e.problem.errors?.length) setServerErrors(serverProblems(e.problem.errors, c.nodes));
    },
  });
  // Problems placed on the nodes are not said again above the canvas; any other (409, 503, ...) is.
  const placed = save.error instanceof ApiError && (save.error.problem.errors?.length ?? 0) > 0;

  const heading = (
    <Title order={1} size="h3">
      Channel builder
    </Title>
  );
  if (loaded.isError) {
    return (
      <Stack>
        {heading}
        <ErrorAlert error={loaded.error} title="Could not load the rule" />
      </Stack>
    );
  }
  if (phone) {
    return (
      <Stack gap="xs">
        {heading}
        <Alert color="blue" p="xs" data-testid="read-only">
          On a phone the builder shows the channel read-only: open it on a tablet or a computer to change it.
        </Alert>
        {ruleName && (
          <Text size="sm">
            Rule <b>{ruleName}</b>
            {description ? ` — ${description}` : ''}
          </Text>
        )}
        {!params.rule && (
          <Text size="sm" c="dimmed">
            Open a rule from its bus to see its channel here.
          </Text>
        )}
        {/* A block of its own: in the column of the page a flex item's height would not be definite for React Flow. */}
        <div>{loaded.isLoading ? <Text>Loading the rule…</Text> : <Canvas readOnly height="65vh" />}</div>
      </Stack>
    );
  }
  const panel = (
    <Paper withBorder p="sm" ref={panelRef}>
      <SidePanel schemas={schemas} schemaErrors={schemaErrors} />
    </Paper>
  );
  return (
    <Stack h={compact ? undefined : 'calc(100vh - 90px)'} gap="xs">
      <UnsavedGuard dirty={dirty} />
      <Group justify="space-between" align="flex-end">
        <Group align="flex-end">
          {heading}
          <TextInput
            label="Rule name"
            value={ruleName}
            onChange={(e) => setRule(e.currentTarget.value, description)}
            disabled={existing}
            withAsterisk
            aria-label="Rule name"
            error={fieldProblem(serverErrors[''], { field: 'name' })}
          />
          <TextInput
            label="Description"
            value={description}
            onChange={(e) => setRule(ruleName, e.currentTarget.value)}
            w={260}
            maw="100%"
            error={fieldProblem(serverErrors[''], { field: 'description' })}
          />
          <Switch
            label="Enabled"
            description="Route events to the targets as soon as it is saved"
            checked={enabled}
            onChange={(e) => setEnabled(e.currentTarget.checked)}
            maw={220}
          />
        </Group>
        <Group gap="xs">
          <ActionIcon variant="default" size="lg" aria-label="Undo" title="Undo (Ctrl+Z)" onClick={undo} disabled={!canUndo}>
            <IconArrowBackUp size={18} aria-hidden />
          </ActionIcon>
          <ActionIcon variant="default" size="lg" aria-label="Redo" title="Redo (Ctrl+Shift+Z)" onClick={redo} disabled={!canRedo}>
            <IconArrowForwardUp size={18} aria-hidden />
          </ActionIcon>
          <Button
            variant="default"
            leftSection={<IconLayoutDistributeHorizontal size={16} aria-hidden />}
            onClick={() => tidy.mutate()}
            loading={tidy.isPending}
            disabled={nodes.length === 0}
            title="Lay the nodes out from left to right, along their connections"
          >
            Tidy up
          </Button>
          {/* One above the other: the buttons keep their place (no wrap of the bar) when they appear. */}
          <Stack gap={0} align="flex-end">
            {attempted && problems > 0 && (
              <Text size="sm" c="red" data-testid="error-count">
                {problems} problem{problems > 1 ? 's' : ''} to fix
              </Text>
            )}
            {dirty && (
              <Text size="sm" c="dimmed" data-testid="unsaved">
                Unsaved changes
              </Text>
            )}
          </Stack>
          {/* Enabled with problems too: a click shows them all, where they are, instead of saving. The server's
              problems of the last save do not hold it back: it checks again. */}
          <Button
            onClick={() => {
              attemptSave();
              if (errorCount === 0) save.mutate(conversion);
            }}
            loading={save.isPending}
          >
            Save
          </Button>
        </Group>
      </Group>
      {graphErrors.length > 0 && (
        <Alert color="yellow" p="xs" data-testid="graph-errors">
          {sentence(graphErrors.join('; '))}.
        </Alert>
      )}
      <ErrorAlert error={tidy.error} title="Could not tidy up" />
      <ErrorAlert error={placed ? undefined : save.error} title="Not saved" />
      {save.isSuccess && !dirty && (
        <Text size="sm" c="green" data-testid="saved">
          Saved.
        </Text>
      )}
      <Group align="stretch" gap="xs" style={compact ? undefined : { flex: 1, minHeight: 0 }} wrap="nowrap">
        <ScrollArea w={compact ? 160 : 190} h={compact ? 520 : undefined} style={{ flexShrink: 0 }}>
          <Palette onPick={pick} />
        </ScrollArea>
        {loaded.isLoading ? <Text>Loading the rule…</Text> : <Canvas boxRef={canvasRef} height={compact ? 520 : undefined} />}
        {!compact && (
          <ScrollArea w={340} style={{ flexShrink: 0 }}>
            {panel}
          </ScrollArea>
        )}
      </Group>
      {compact && panel}
    </Stack>
  );
}

export function BuilderPage() {
  return (
    <ReactFlowProvider>
      <LiveStatus>
        <Builder />
      </LiveStatus>
    </ReactFlowProvider>
  );
}
