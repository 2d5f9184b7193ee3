import { addEdge, applyEdgeChanges, applyNodeChanges, type Connection, type EdgeChange, type NodeChange } from '@xyflow/react';
import { create } from 'zustand';
import type { BuilderEdge, BuilderNode, Graph, NodeData } from './types';

/** The channel builder's store: the canvas graph, the selection and the rule's own fields. */
export interface BuilderState {
  nodes: BuilderNode[];
  edges: BuilderEdge[];
  selected?: string;
  ruleName: string;
  description: string;
  /** existing is true when the graph was loaded from a saved rule (save replaces it). */
  existing: boolean;
  /** graphErrors are the errors of each node, by id ("" for the graph as a whole): convert's and its form's. */
  graphErrors: Record<string, string[]>;
  seq: number;
  load: (g: Graph, ruleName: string, description: string, existing: boolean) => void;
  onNodesChange: (c: NodeChange<BuilderNode>[]) => void;
  onEdgesChange: (c: EdgeChange<BuilderEdge>[]) => void;
  onConnect: (c: Connection) => void;
  addNode: (data: NodeData, position: { x: number; y: number }) => string;
  update: (id: string, data: Partial<NodeData>) => void;
  select: (id: string | undefined) => void;
  setRule: (name: string, description: string) => void;
  setGraphErrors: (errs: Record<string, string[]>) => void;
}

export const useBuilder = create<BuilderState>((set, get) => ({
  nodes: [],
  edges: [],
  ruleName: '',
  description: '',
  existing: false,
  graphErrors: {},
  seq: 0,
  load: (g, ruleName, description, existing) => set({ nodes: g.nodes, edges: g.edges, ruleName, description, existing, selected: undefined, graphErrors: {} }),
  onNodesChange: (c) => set({ nodes: applyNodeChanges(c, get().nodes) }),
  onEdgesChange: (c) => set({ edges: applyEdgeChanges(c, get().edges) }),
  onConnect: (c) => set({ edges: addEdge({ ...c, id: `${c.source}->${c.target}` }, get().edges) }),
  addNode: (data, position) => {
    const seq = get().seq + 1;
    const id = `${data.kind}-${seq}`;
    set({ seq, nodes: [...get().nodes, { id, type: data.kind, position, data }], selected: id });
    return id;
  },
  update: (id, data) =>
    set({ nodes: get().nodes.map((n) => (n.id === id ? { ...n, data: { ...n.data, ...data } as NodeData } : n)) }),
  select: (id) => set({ selected: id }),
  setRule: (ruleName, description) => set({ ruleName, description }),
  // Set on every change of the graph: an equal value is not stored, so the nodes do not render again.
  setGraphErrors: (graphErrors) => {
    if (JSON.stringify(graphErrors) !== JSON.stringify(get().graphErrors)) set({ graphErrors });
  },
}));
