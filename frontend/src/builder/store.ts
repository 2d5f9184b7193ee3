import { addEdge, applyEdgeChanges, applyNodeChanges, type Connection, type EdgeChange, type NodeChange, type XYPosition } from '@xyflow/react';
import { create } from 'zustand';
import { channelKey } from './dirty';
import { emptyHistory, record, redo, undo, type History } from './history';
import type { ServerProblems } from './serverProblems';
import type { BuilderEdge, BuilderNode, Graph, NodeData } from './types';

/** Snapshot is what undo brings back: the graph and the rule's own fields, not the selection nor the errors. */
export interface Snapshot {
  nodes: BuilderNode[];
  edges: BuilderEdge[];
  ruleName: string;
  description: string;
  enabled: boolean;
}

/** The channel builder's store: the canvas graph, the selection, the rule's own fields and their history. */
export interface BuilderState extends Snapshot {
  selected?: string;
  /** existing is true when the graph was loaded from a saved rule (save replaces it). */
  existing: boolean;
  /** graphErrors are the errors of each node, by id ("" for the graph as a whole): convert's and its form's. */
  graphErrors: Record<string, string[]>;
  /**
   * serverErrors are the problems the server found in the last save, by node id ("" for the graph): a node's go
   * when it is edited or removed, the graph's with the next change (the rule's name and description: with theirs).
   */
  serverErrors: ServerProblems;
  /** baseline is channelKey of the channel as loaded or last saved: isDirty compares the channel with it. */
  baseline: string;
  /**
   * touched holds the nodes the user edited or connected, and attempted tells that a save was tried: errors
   * show only there (showsErrors), so that a channel just started does not open on a list of what it lacks.
   */
  touched: ReadonlySet<string>;
  attempted: boolean;
  history: History<Snapshot>;
  canUndo: boolean;
  canRedo: boolean;
  seq: number;
  load: (g: Graph, ruleName: string, description: string, existing: boolean, enabled?: boolean) => void;
  onNodesChange: (c: NodeChange<BuilderNode>[]) => void;
  onEdgesChange: (c: EdgeChange<BuilderEdge>[]) => void;
  onConnect: (c: Connection) => void;
  addNode: (data: NodeData, position: XYPosition) => string;
  /** update is the user's edit of a node's data: one step of undo for a run of quick edits. */
  update: (id: string, data: Partial<NodeData>) => void;
  /** fillDefaults sets a node's config to its schema's defaults: no edit of the user, not undone on its own. */
  fillDefaults: (id: string, config: Record<string, string>) => void;
  select: (id: string | undefined) => void;
  setRule: (name: string, description: string) => void;
  setEnabled: (enabled: boolean) => void;
  /** arrange moves nodes to the given positions in one step (the tidy-up's layout). */
  arrange: (positions: Record<string, XYPosition>) => void;
  setGraphErrors: (errs: Record<string, string[]>) => void;
  /** attemptSave records that the user tried to save: from then on every error shows. */
  attemptSave: () => void;
  /** setServerErrors shows the server's problems of a save on their nodes, which count as touched. */
  setServerErrors: (p: ServerProblems) => void;
  /** markSaved records key (channelKey of what was sent) as the saved channel. */
  markSaved: (key: string) => void;
  undo: () => void;
  redo: () => void;
}

/** showsErrors tells whether the errors of a node ("" for the graph's own) are shown to the user yet. */
export function showsErrors(s: Pick<BuilderState, 'touched' | 'attempted'>, id: string): boolean {
  return s.attempted || (id !== '' && s.touched.has(id));
}

/** shownErrors are the errors the user sees: those of touched nodes, all of them once a save was attempted. */
export function shownErrors(s: Pick<BuilderState, 'touched' | 'attempted' | 'graphErrors'>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(s.graphErrors).filter(([id]) => showsErrors(s, id)));
}

/** isDirty tells whether the channel differs from the one loaded or last saved (positions included). */
export function isDirty(s: Snapshot & Pick<BuilderState, 'baseline'>): boolean {
  return channelKey(s) !== s.baseline;
}

/**
 * withoutServer drops the server's problems of the nodes ids and those of the graph as a whole, but for those of
 * the rule's fields, which go only when rule is true.
 */
function withoutServer(p: ServerProblems, ids: string[], rule = false): ServerProblems {
  if (Object.keys(p).length === 0) return p;
  const out = { ...p };
  for (const id of ids) delete out[id];
  const graph = (out[''] ?? []).filter((x) => !rule && x.field);
  if (graph.length > 0) out[''] = graph;
  else delete out[''];
  return out;
}

const snapshot = (s: Snapshot): Snapshot => ({ nodes: s.nodes, edges: s.edges, ruleName: s.ruleName, description: s.description, enabled: s.enabled });

const withTouched = (touched: ReadonlySet<string>, ...ids: string[]) => (ids.every((id) => touched.has(id)) ? touched : new Set([...touched, ...ids]));

/** selectOnly marks id as React Flow's selected node, and no other: the canvas shows what the side panel edits. */
const selectOnly = (nodes: BuilderNode[], id: string | undefined) =>
  nodes.map((n) => ((n.selected ?? false) === (n.id === id) ? n : { ...n, selected: n.id === id }));

export const useBuilder = create<BuilderState>((set, get) => {
  // The state before a drag of nodes: recorded once the drag ends, not at each of its moves.
  let dragStart: Snapshot | undefined;

  /** step is the state's part that records the state as it is now as a step to undo (key: see history.record). */
  const step = (key?: string) => {
    const history = record(get().history, snapshot(get()), key, Date.now());
    return { history, canUndo: true, canRedo: false };
  };

  const restore = (s: Snapshot, history: History<Snapshot>) => {
    dragStart = undefined;
    const selected = s.nodes.some((n) => n.id === get().selected) ? get().selected : undefined;
    set({ ...s, nodes: selectOnly(s.nodes, selected), selected, history, canUndo: history.past.length > 0, canRedo: history.future.length > 0 });
  };

  return {
    nodes: [],
    edges: [],
    ruleName: '',
    description: '',
    enabled: true,
    existing: false,
    graphErrors: {},
    serverErrors: {},
    baseline: channelKey({ nodes: [], edges: [], ruleName: '', description: '', enabled: true }),
    touched: new Set(),
    attempted: false,
    history: emptyHistory(),
    canUndo: false,
    canRedo: false,
    seq: 0,
    load: (g, ruleName, description, existing, enabled = true) => {
      dragStart = undefined;
      set({
        nodes: g.nodes,
        edges: g.edges,
        ruleName,
        description,
        enabled,
        existing,
        selected: undefined,
        graphErrors: {},
        serverErrors: {},
        baseline: channelKey({ nodes: g.nodes, edges: g.edges, ruleName, description, enabled }),
        touched: new Set(),
        attempted: false,
        history: emptyHistory(),
        canUndo: false,
        canRedo: false,
      });
    },
    // Of React Flow's node changes, removals and moves are the user's; nodes are added through addNode, and
    // selections and sizes are no step to undo.
    onNodesChange: (c) => {
      const s = get();
      let recorded = {};
      const moves = c.filter((x) => x.type === 'position');
      const removed = c.flatMap((x) => (x.type === 'remove' ? [x.id] : []));
      if (removed.length > 0) {
        // React Flow removes a node's edges first, then the node, in two calls: one step for both.
        recorded = { ...step('remove'), serverErrors: withoutServer(s.serverErrors, removed) };
      } else if (moves.some((m) => m.dragging)) {
        dragStart ??= snapshot(s);
      } else if (moves.length > 0) {
        if (dragStart) {
          const history = record(s.history, dragStart, undefined, Date.now());
          recorded = { history, canUndo: true, canRedo: false };
          dragStart = undefined;
        } else {
          // Moved with the arrow keys: a run of presses is one step.
          recorded = step(`move:${moves.map((m) => m.id).join(',')}`);
        }
      }
      // React Flow selects with a click and with Enter on a focused node: the side panel follows.
      let selected = s.selected;
      for (const x of c) {
        if (x.type === 'select' && x.selected) selected = x.id;
        else if ((x.type === 'select' || x.type === 'remove') && x.id === selected) selected = undefined;
      }
      set({ nodes: applyNodeChanges(c, s.nodes), selected, ...recorded });
    },
    onEdgesChange: (c) => {
      // Of React Flow's edge changes only removals are the user's: edges are added through onConnect.
      const removal = c.some((x) => x.type === 'remove') ? { ...step('remove'), serverErrors: withoutServer(get().serverErrors, []) } : {};
      set({ edges: applyEdgeChanges(c, get().edges), ...removal });
    },
    onConnect: (c) => {
      const edges = addEdge({ ...c, id: `${c.source}->${c.target}` }, get().edges);
      // The same array when the edge was there already: nothing to undo.
      if (edges !== get().edges) set({ ...step(), edges, touched: withTouched(get().touched, c.source, c.target), serverErrors: withoutServer(get().serverErrors, []) });
    },
    addNode: (data, position) => {
      const seq = get().seq + 1;
      const id = `${data.kind}-${seq}`;
      set({
        ...step(),
        seq,
        nodes: [...selectOnly(get().nodes, undefined), { id, type: data.kind, position, data, selected: true }],
        selected: id,
        serverErrors: withoutServer(get().serverErrors, []),
      });
      return id;
    },
    update: (id, data) =>
      set({
        ...step(`data:${id}`),
        nodes: get().nodes.map((n) => (n.id === id ? { ...n, data: { ...n.data, ...data } as NodeData } : n)),
        touched: withTouched(get().touched, id),
        serverErrors: withoutServer(get().serverErrors, [id]),
      }),
    // Defaults filled in are no change of the user's: a channel that had none has none after.
    fillDefaults: (id, config) => {
      const s = get();
      const nodes = s.nodes.map((n) => (n.id === id ? { ...n, data: { ...n.data, config } as NodeData } : n));
      set({ nodes, ...(isDirty(s) ? {} : { baseline: channelKey({ ...s, nodes }) }) });
    },
    select: (id) => set({ selected: id }),
    setRule: (ruleName, description) => set({ ...step('rule'), ruleName, description, serverErrors: withoutServer(get().serverErrors, [], true) }),
    setEnabled: (enabled) => set({ ...step(), enabled, serverErrors: withoutServer(get().serverErrors, []) }),
    arrange: (positions) => set({ ...step(), nodes: get().nodes.map((n) => (positions[n.id] ? { ...n, position: positions[n.id] } : n)) }),
    // Set on every change of the graph: an equal value is not stored, so the nodes do not render again.
    setGraphErrors: (graphErrors) => {
      if (JSON.stringify(graphErrors) !== JSON.stringify(get().graphErrors)) set({ graphErrors });
    },
    attemptSave: () => set({ attempted: true }),
    setServerErrors: (serverErrors) => set({ serverErrors, touched: withTouched(get().touched, ...Object.keys(serverErrors).filter((id) => id !== '')) }),
    markSaved: (baseline) => set({ baseline }),
    undo: () => {
      const r = undo(get().history, snapshot(get()));
      if (r) restore(r.state, r.history);
    },
    redo: () => {
      const r = redo(get().history, snapshot(get()));
      if (r) restore(r.state, r.history);
    },
  };
});
