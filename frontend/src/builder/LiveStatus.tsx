import { useQuery } from '@tanstack/react-query';
import { createContext, useContext, type ReactNode } from 'react';
import { useParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { channelStatus, nodeStatus, type ChannelStatus } from './status';
import type { NodeData } from './types';

/** How often the nodes' status is read again. */
export const STATUS_REFRESH_MS = 5000;

const StatusContext = createContext<ChannelStatus | undefined>(undefined);

/**
 * LiveStatus reads the status of the rule's targets and the bus's sources of /builder/:bus/:rule every few seconds
 * for the nodes (useNodeStatus), from the channel API's GET. It is a query of its own, apart from the one that
 * loads the graph: reading the status again never reloads the canvas over the user's changes. A failed read shows
 * the last status it had.
 */
export function LiveStatus({ children }: { children: ReactNode }) {
  const { bus, rule } = useParams();
  const q = useQuery({
    queryKey: ['channel-status', bus, rule],
    enabled: !!bus && !!rule,
    queryFn: async () => {
      const ch = await api<Schemas['Channel']>(`/buses/${enc(bus!)}/channels/${enc(rule!)}`);
      return channelStatus(ch.targets ?? [], ch.sources ?? []);
    },
    refetchInterval: STATUS_REFRESH_MS,
    retry: false,
  });
  return <StatusContext.Provider value={bus && rule ? q.data : undefined}>{children}</StatusContext.Provider>;
}

/** useNodeStatus is the live status of a saved target's or source's node; undefined for other nodes. */
export function useNodeStatus(id: string, data: NodeData) {
  return nodeStatus(useContext(StatusContext), id, data);
}
