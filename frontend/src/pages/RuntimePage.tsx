import { Badge, Box, Button, Code, Group, Modal, Paper, Stack, Table, Text, Title, Tooltip } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, enc, type RuntimeConnector, type Schemas } from '../api/client';
import { HealthBadge, HealthLine } from '../components/Health';
import { ErrorAlert, QueryState } from '../components/states';
import { sentence, toast } from '../components/toast';
import { RelativeTime } from '../components/Time';
import { ownerOf } from './owner';
import { heartbeatAge } from './heartbeat';
import {
  actionLabel,
  confirmText,
  connectorActionOrder,
  connectorActions,
  loadOf,
  needsConfirmation,
  stateWords,
  taskRestart,
  type ActionState,
  type ConnectorAction,
} from './runtime';

const REFRESH_MS = 2000;

const stateColor: Record<string, string> = {
  RUNNING: 'green',
  PAUSED: 'yellow',
  STOPPED: 'gray',
  FAILED: 'red',
  UNASSIGNED: 'orange',
  RESTARTING: 'blue',
};

/** StateBadge shows a runtime state in full (never cut to "RUNNI…"), with its meaning on hover. */
export function StateBadge({ state, size, testId = 'state' }: { state?: string; size?: 'xs' | 'sm' | 'md'; testId?: string }) {
  return (
    <Tooltip label={stateWords(state)} multiline maw={320} openDelay={300}>
      <Badge size={size} color={stateColor[state ?? ''] ?? 'gray'} data-testid={testId} style={{ minWidth: 'max-content', overflow: 'visible' }}>
        {state || 'UNKNOWN'}
      </Badge>
    </Tooltip>
  );
}

type Counters = Schemas['RuntimeTaskCounters'];
const counterNames: [keyof Counters, string][] = [
  ['read', 'read'],
  ['written', 'written'],
  ['matched', 'matched'],
  ['routed', 'routed'],
  ['filtered', 'filtered'],
  ['retried', 'retried'],
  ['failed', 'failed'],
  ['deadLettered', 'dead-lettered'],
  ['dropped', 'dropped'],
];

function CountersText({ c }: { c?: Counters }) {
  if (!c) return <Text c="dimmed" size="xs">Not running</Text>;
  const parts = counterNames.filter(([k]) => c[k] !== undefined && c[k] !== 0).map(([k, label]) => `${label} ${c[k]}`);
  return <Text size="xs">{parts.length > 0 ? parts.join(' · ') : 'Nothing yet'}</Text>;
}

/**
 * ActionButton is an action that may be unavailable: then it stays focusable and says why on hover and focus
 * (a disabled button would get no pointer events, so its tooltip would never show).
 */
function ActionButton({ label, state, loading, onClick, color }: { label: string; state: ActionState; loading?: boolean; onClick: () => void; color?: string }) {
  const button = (
    <Button
      size="compact-xs"
      variant="light"
      color={color}
      loading={loading}
      data-disabled={state.enabled ? undefined : true}
      aria-disabled={state.enabled ? undefined : true}
      onClick={(e) => {
        if (!state.enabled) return e.preventDefault();
        onClick();
      }}
    >
      {label}
    </Button>
  );
  if (state.enabled) return button;
  return (
    <Tooltip label={state.reason} multiline maw={280}>
      {button}
    </Tooltip>
  );
}

/** What a confirmation dialog asks about: an action on the connector, or the restart of one of its tasks. */
/** actionDone says what an action did, for its toast ("Target hook of rule created on bus orders paused"). */
const actionDone: Record<ConnectorAction, string> = { pause: 'paused', resume: 'resumed', stop: 'stopped', restart: 'restarted' };

type Pending = { kind: 'connector'; action: ConnectorAction } | { kind: 'task'; task: number };

/** useConnectorControls holds what a connector's row or card shows and does: its actions, tasks and dialog. */
function useConnectorControls(c: RuntimeConnector) {
  const qc = useQueryClient();
  const name = c.name ?? '';
  const owner = ownerOf(name);
  const what = owner || `connector ${name}`;
  const actions = connectorActions(c.state);
  const [confirming, setConfirming] = useState<Pending | undefined>();
  const refresh = () => qc.invalidateQueries({ queryKey: ['runtime'] });
  const action = useMutation({
    mutationFn: (a: ConnectorAction) => api(`/runtime/connectors/${enc(name)}/${a}`, { method: 'POST' }),
    onSuccess: (_, a) => {
      setConfirming(undefined);
      toast(`${sentence(what)} ${actionDone[a]}`);
    },
    onSettled: refresh,
  });
  const taskRestartM = useMutation({
    mutationFn: (t: number) => api(`/runtime/connectors/${enc(name)}/tasks/${t}/restart`, { method: 'POST' }),
    onSuccess: (_, t) => {
      setConfirming(undefined);
      toast(`Task ${t} of ${what} restarted`);
    },
    onSettled: refresh,
  });
  const ask = (p: Pending) => {
    action.reset();
    taskRestartM.reset();
    setConfirming(p);
  };
  const run = (a: ConnectorAction) => (needsConfirmation(a) ? ask({ kind: 'connector', action: a }) : action.mutate(a));
  const task = confirming?.kind === 'task' ? (c.tasks ?? []).find((t) => t.id === confirming.task) : undefined;
  // The state may have changed while the dialog was open: what is no longer possible is not sent.
  const stillPossible =
    confirming?.kind === 'connector' ? actions[confirming.action].enabled : confirming?.kind === 'task' ? taskRestart(c.state, task?.state).enabled : false;

  const about = (
    <>
      <Text fw={500} size="sm" style={{ wordBreak: 'break-all' }}>
        {name}
      </Text>
      <Text size="xs" c="dimmed">
        {owner ? `${owner} · ` : ''}
        {c.type}
      </Text>
      {c.trace && (
        <Code block c="red">
          {c.trace}
        </Code>
      )}
      {!confirming && <ErrorAlert error={action.error ?? taskRestartM.error} />}
    </>
  );
  const buttons = (
    <Group gap={4}>
      {connectorActionOrder.map((a) => (
        <ActionButton
          key={a}
          label={actionLabel[a]}
          state={actions[a]}
          color={a === 'stop' ? 'red' : undefined}
          loading={action.isPending && action.variables === a}
          onClick={() => run(a)}
        />
      ))}
    </Group>
  );
  const tasks = (
    <Stack gap={6}>
      {(c.tasks ?? []).length === 0 && (
        <Text size="xs" c="dimmed">
          No tasks
        </Text>
      )}
      {(c.tasks ?? []).map((t) => (
        <Stack key={t.id} gap={0} data-testid={`task-${t.id}`}>
          <Group gap="xs">
            <Text size="xs">Task {t.id}</Text>
            <StateBadge size="xs" state={t.state} testId="task-state" />
            {t.workerId && (
              <Text size="xs" c="dimmed">
                on {t.workerId}
              </Text>
            )}
            {t.trace && (
              <Tooltip label={t.trace} multiline maw={400}>
                <Badge size="xs" color="red" style={{ minWidth: 'max-content' }}>
                  Error
                </Badge>
              </Tooltip>
            )}
            <ActionButton
              label="Restart task"
              state={taskRestart(c.state, t.state)}
              loading={taskRestartM.isPending && taskRestartM.variables === t.id}
              onClick={() => ask({ kind: 'task', task: t.id ?? 0 })}
            />
          </Group>
          <CountersText c={t.counters} />
        </Stack>
      ))}
    </Stack>
  );
  const dialog = (
    <Modal
      opened={confirming !== undefined}
      onClose={() => setConfirming(undefined)}
      title={confirming?.kind === 'connector' ? `${actionLabel[confirming.action]} ${what}?` : `Restart task ${task?.id ?? ''}?`}
    >
      <Text size="sm" data-testid="confirm-question">
        {confirming?.kind === 'connector'
          ? confirmText(confirming.action, what)
          : `Restart task ${task?.id ?? ''} of ${what}? It starts again with the stored configuration; its counters start from zero.`}
      </Text>
      {!stillPossible && (
        <Text size="sm" c="orange" mt="xs">
          Its state changed to {c.state}: this is no longer possible.
        </Text>
      )}
      <ErrorAlert error={confirming?.kind === 'task' ? taskRestartM.error : action.error} />
      <Group justify="flex-end" mt="md">
        <Button variant="default" onClick={() => setConfirming(undefined)}>
          Cancel
        </Button>
        <Button
          color={confirming?.kind === 'connector' && confirming.action === 'stop' ? 'red' : undefined}
          disabled={!stillPossible}
          loading={action.isPending || taskRestartM.isPending}
          onClick={() => {
            if (confirming?.kind === 'connector') action.mutate(confirming.action);
            else if (confirming?.kind === 'task') taskRestartM.mutate(confirming.task);
          }}
        >
          {confirming?.kind === 'connector' ? actionLabel[confirming.action] : 'Restart task'}
        </Button>
      </Group>
    </Modal>
  );
  return { about, buttons, tasks, dialog };
}

/**
 * ConnectorHealth is a connector's health badge and its last failure (docs/health.md). A connector that delivers
 * nothing itself (a bus's router) says nothing of deliveries while none failed.
 */
function ConnectorHealth({ c }: { c: RuntimeConnector }) {
  return (
    <Box maw={340} style={{ minWidth: 0 }}>
      <HealthLine facts={c} size="xs" idle="" />
    </Box>
  );
}

function ConnectorRow({ c }: { c: RuntimeConnector }) {
  const k = useConnectorControls(c);
  return (
    <Table.Tr data-testid={`connector-${c.name}`}>
      <Table.Td>{k.about}</Table.Td>
      <Table.Td>
        <Stack gap={6} align="flex-start">
          <Group gap={4} wrap="nowrap">
            <StateBadge state={c.state} />
            <HealthBadge health={c.health} />
          </Group>
          <ConnectorHealth c={c} />
        </Stack>
      </Table.Td>
      <Table.Td>{c.workerId}</Table.Td>
      <Table.Td>{k.tasks}</Table.Td>
      <Table.Td>
        {k.buttons}
        {k.dialog}
      </Table.Td>
    </Table.Tr>
  );
}

/** ConnectorCard is a connector on a phone: what a row shows, stacked. */
function ConnectorCard({ c }: { c: RuntimeConnector }) {
  const k = useConnectorControls(c);
  return (
    <Paper withBorder p="sm" data-testid={`connector-${c.name}`}>
      <Stack gap="xs">
        <Group justify="space-between" align="flex-start" wrap="nowrap">
          <div style={{ minWidth: 0 }}>{k.about}</div>
          <Stack gap={4} align="flex-end">
            <StateBadge state={c.state} />
            <HealthBadge health={c.health} />
          </Stack>
        </Group>
        <ConnectorHealth c={c} />
        {k.buttons}
        {k.tasks}
      </Stack>
      {k.dialog}
    </Paper>
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
  const load = loadOf(workers.data?.workers ?? [], connectors.data?.connectors ?? []);
  const liveWorkers = Object.keys(load.byWorker).length;
  const running = load.total - load.unassigned;
  // On a phone the connectors are cards: a table of five columns would need scrolling sideways to its actions.
  const phone = useMediaQuery('(max-width: 47.99em)', false, { getInitialValueInEffect: false });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h3">
          Runtime
        </Title>
        <Text size="xs" c="dimmed">
          Refreshed every {REFRESH_MS / 1000} s
        </Text>
      </Group>
      <Title order={2} size="h4">
        Workers
      </Title>
      {workers.data && connectors.data && liveWorkers > 0 && (
        <Text size="sm" data-testid="capacity">
          {liveWorkers === 1 ? '1 worker runs' : `${liveWorkers} workers run`} {running === 1 ? '1 task' : `${running} tasks`} of this account
          {liveWorkers > 1 ? `, ${Number(load.perWorker.toFixed(1))} per worker on average` : ''}
          {load.unassigned > 0 ? `; ${load.unassigned} wait${load.unassigned === 1 ? 's' : ''} for a worker` : ''}.
        </Text>
      )}
      <QueryState query={workers} isEmpty={(d) => (d.workers ?? []).length === 0} empty="No worker has joined: connectors run on workers, and none is there to run them.">
        {(d) => (
          <Table.ScrollContainer type="native" minWidth={640} aria-label="Workers">
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Worker</Table.Th>
                  <Table.Th>Address</Table.Th>
                  <Table.Th>Version</Table.Th>
                  <Table.Th>Joined</Table.Th>
                  <Table.Th>Last heartbeat</Table.Th>
                  <Table.Th>Tasks</Table.Th>
                  <Table.Th>Connectors</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {(d.workers ?? []).map((w) => (
                  <Table.Tr key={w.id} data-testid={`worker-${w.id}`}>
                    <Table.Td>{w.id}</Table.Td>
                    <Table.Td>{w.url}</Table.Td>
                    <Table.Td>{w.version}</Table.Td>
                    <Table.Td>
                      <RelativeTime value={w.started} />
                    </Table.Td>
                    <Table.Td>{heartbeatAge(w.lastHeartbeat, new Date())}</Table.Td>
                    <Table.Td data-testid="worker-tasks">{connectors.data ? (load.byWorker[w.id ?? '']?.tasks ?? 0) : '…'}</Table.Td>
                    <Table.Td>{connectors.data ? (load.byWorker[w.id ?? '']?.connectors ?? 0) : '…'}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryState>
      <Title order={2} size="h4">
        Connectors
      </Title>
      <QueryState
        query={connectors}
        isEmpty={(d) => (d.connectors ?? []).length === 0}
        empty="No connectors yet. A connector runs each bus's router, each source and each rule's target: create a bus with a rule and a target, and they show here."
      >
        {(d) =>
          phone ? (
            <Stack gap="sm">
              {(d.connectors ?? []).map((c) => (
                <ConnectorCard key={c.name} c={c} />
              ))}
            </Stack>
          ) : (
            <Table.ScrollContainer type="native" minWidth={1000} aria-label="Connectors">
              <Table verticalSpacing="sm">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Connector</Table.Th>
                    <Table.Th>State and health</Table.Th>
                    <Table.Th>Worker</Table.Th>
                    <Table.Th>Tasks and counters</Table.Th>
                    <Table.Th>Actions</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {(d.connectors ?? []).map((c) => (
                    <ConnectorRow key={c.name} c={c} />
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )
        }
      </QueryState>
    </Stack>
  );
}
