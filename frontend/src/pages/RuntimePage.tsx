import { Badge, Button, Code, Group, Stack, Table, Text, Title, Tooltip } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, enc, type RuntimeConnector, type Schemas } from '../api/client';
import { ErrorAlert, QueryState } from '../components/states';
import { ownerOf } from './owner';
import { heartbeatAge } from './heartbeat';

const REFRESH_MS = 2000;

const stateColor: Record<string, string> = {
  RUNNING: 'green',
  PAUSED: 'yellow',
  STOPPED: 'gray',
  FAILED: 'red',
  UNASSIGNED: 'orange',
  RESTARTING: 'blue',
};

export function StateBadge({ state }: { state?: string }) {
  return (
    <Badge color={stateColor[state ?? ''] ?? 'gray'} data-testid="state">
      {state ?? 'UNKNOWN'}
    </Badge>
  );
}

type Counters = Schemas['RuntimeTaskCounters'];
const counterNames: (keyof Counters)[] = ['read', 'written', 'matched', 'routed', 'filtered', 'retried', 'failed', 'deadLettered', 'dropped'];

function CountersText({ c }: { c?: Counters }) {
  if (!c) return <Text c="dimmed" size="xs">not running</Text>;
  const parts = counterNames.filter((k) => c[k] !== undefined && c[k] !== 0).map((k) => `${k} ${c[k]}`);
  return <Text size="xs">{parts.length > 0 ? parts.join(' · ') : 'nothing yet'}</Text>;
}

function ConnectorRow({ c }: { c: RuntimeConnector }) {
  const qc = useQueryClient();
  const name = c.name ?? '';
  const action = useMutation({
    mutationFn: (a: string) => api(`/runtime/connectors/${enc(name)}/${a}`, { method: 'POST' }),
    onSettled: () => qc.invalidateQueries({ queryKey: ['runtime'] }),
  });
  const taskRestart = useMutation({
    mutationFn: (t: number) => api(`/runtime/connectors/${enc(name)}/tasks/${t}/restart`, { method: 'POST' }),
    onSettled: () => qc.invalidateQueries({ queryKey: ['runtime'] }),
  });
  return (
    <Table.Tr data-testid={`connector-${name}`}>
      <Table.Td>
        <Text fw={500} size="sm">{name}</Text>
        <Text size="xs" c="dimmed">{ownerOf(name)} · {c.type}</Text>
        {c.trace && <Code block c="red">{c.trace}</Code>}
        <ErrorAlert error={action.error ?? taskRestart.error} />
      </Table.Td>
      <Table.Td>
        <StateBadge state={c.state} />
      </Table.Td>
      <Table.Td>{c.workerId}</Table.Td>
      <Table.Td>
        <Stack gap={4}>
          {(c.tasks ?? []).map((t) => (
            <Group key={t.id} gap="xs" wrap="nowrap">
              <Text size="xs">#{t.id}</Text>
              <Badge size="xs" color={stateColor[t.state ?? ''] ?? 'gray'}>{t.state}</Badge>
              <Text size="xs" c="dimmed">{t.workerId}</Text>
              <CountersText c={t.counters} />
              {t.trace && (
                <Tooltip label={t.trace} multiline w={400}>
                  <Badge size="xs" color="red">error</Badge>
                </Tooltip>
              )}
              <Button size="compact-xs" variant="subtle" onClick={() => taskRestart.mutate(t.id ?? 0)}>
                restart task
              </Button>
            </Group>
          ))}
        </Stack>
      </Table.Td>
      <Table.Td>
        <Group gap={4} wrap="nowrap">
          {['pause', 'resume', 'stop', 'restart'].map((a) => (
            <Button key={a} size="compact-xs" variant="light" loading={action.isPending && action.variables === a} onClick={() => action.mutate(a)}>
              {a}
            </Button>
          ))}
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}

export function RuntimePage() {
  const workers = useQuery({
    queryKey: ['runtime', 'workers'],
    queryFn: () => api<Schemas['RuntimeWorkerList']>('/runtime/workers'),
    refetchInterval: REFRESH_MS,
  });
  const connectors = useQuery({
    queryKey: ['runtime', 'connectors'],
    queryFn: () => api<Schemas['RuntimeConnectorList']>('/runtime/connectors'),
    refetchInterval: REFRESH_MS,
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={3}>Runtime</Title>
        <Text size="xs" c="dimmed">refreshed every {REFRESH_MS / 1000}s</Text>
      </Group>
      <Title order={5}>Workers</Title>
      <QueryState query={workers} isEmpty={(d) => (d.workers ?? []).length === 0} empty="No worker has joined.">
        {(d) => (
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Id</Table.Th>
                <Table.Th>Address</Table.Th>
                <Table.Th>Version</Table.Th>
                <Table.Th>Last heartbeat</Table.Th>
                <Table.Th>Tasks</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(d.workers ?? []).map((w) => (
                <Table.Tr key={w.id}>
                  <Table.Td>{w.id}</Table.Td>
                  <Table.Td>{w.url}</Table.Td>
                  <Table.Td>{w.version}</Table.Td>
                  <Table.Td title={w.started ? `joined ${w.started}` : undefined}>{heartbeatAge(w.lastHeartbeat, new Date())}</Table.Td>
                  <Table.Td>{(connectors.data?.connectors ?? []).flatMap((c) => c.tasks ?? []).filter((t) => t.workerId === w.id).length}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryState>
      <Title order={5}>Connectors</Title>
      <QueryState query={connectors} isEmpty={(d) => (d.connectors ?? []).length === 0} empty="No connectors: buses with rules and targets run connectors.">
        {(d) => (
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Connector</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Worker</Table.Th>
                <Table.Th>Tasks and counters</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(d.connectors ?? []).map((c) => (
                <ConnectorRow key={c.name} c={c} />
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryState>
    </Stack>
  );
}
