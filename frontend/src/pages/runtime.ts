/**
 * What the runtime page offers for a connector in each state, and how the tasks spread over the workers. Pure: no
 * React here.
 *
 * The states are the runtime's (web/rest/runtime.go, rpc/types.go): RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED
 * and RESTARTING. The actions follow worker/herder: pause and stop set the state the connector should be in
 * (records wait in the stream while paused; a stopped connector lists no tasks), resume brings a paused or stopped
 * connector back to RUNNING, restart restarts the connector and its tasks with the stored config (nothing to
 * restart when stopped), and a task restarts only while its connector is meant to run.
 */

export type ConnectorAction = 'pause' | 'resume' | 'stop' | 'restart';

export const connectorActionOrder: ConnectorAction[] = ['pause', 'resume', 'stop', 'restart'];

/** Labels of the actions, in sentence case. */
export const actionLabel: Record<ConnectorAction, string> = { pause: 'Pause', resume: 'Resume', stop: 'Stop', restart: 'Restart' };

export interface ActionState {
  enabled: boolean;
  /** reason says why a disabled action cannot be taken now (for a tooltip). */
  reason?: string;
}

const on: ActionState = { enabled: true };
const off = (reason: string): ActionState => ({ enabled: false, reason });

/**
 * connectorActions says which actions a connector in state offers. An unknown state (a newer runtime's) offers
 * every action: the runtime answers for itself.
 */
export function connectorActions(state: string | undefined): Record<ConnectorAction, ActionState> {
  switch (state) {
    case 'RUNNING':
      return { pause: on, resume: off('It is running.'), stop: on, restart: on };
    case 'PAUSED':
      return { pause: off('It is paused.'), resume: on, stop: on, restart: off('Its tasks are paused: resume it instead.') };
    case 'STOPPED':
      return { pause: off('It is stopped: resume it first.'), resume: on, stop: off('It is stopped.'), restart: off('It is stopped and has no tasks: resume it instead.') };
    case 'FAILED':
      return { pause: off('It failed: restart it first.'), resume: off('It failed: restart it instead.'), stop: on, restart: on };
    case 'UNASSIGNED':
      return { pause: on, resume: off('It waits for a worker.'), stop: on, restart: off('It waits for a worker: nothing runs to restart.') };
    case 'RESTARTING': {
      const wait = off('It is restarting: wait a moment.');
      return { pause: wait, resume: wait, stop: wait, restart: wait };
    }
    default:
      return { pause: on, resume: on, stop: on, restart: on };
  }
}

/** needsConfirmation lists the actions that ask first: they end what runs (stop) or start it over (restart). */
export function needsConfirmation(a: ConnectorAction): boolean {
  return a === 'stop' || a === 'restart';
}

/** confirmText is the question of an action's confirmation dialog, about the connector named what. */
export function confirmText(a: ConnectorAction, what: string): string {
  switch (a) {
    case 'stop':
      return `Stop ${what}? Its tasks end and it takes no more records until it is resumed; the events meant for it wait in the bus's stream.`;
    case 'restart':
      return `Restart ${what}? Its tasks start again with the stored configuration; their counters start from zero.`;
    default:
      return `${actionLabel[a]} ${what}?`;
  }
}

/**
 * taskRestart says whether task restart is offered for a task in taskState of a connector in connectorState: the
 * runtime restarts a task only while its connector is meant to run.
 */
export function taskRestart(connectorState: string | undefined, taskState: string | undefined): ActionState {
  switch (connectorState) {
    case 'PAUSED':
      return off('The connector is paused: resume it instead.');
    case 'STOPPED':
      return off('The connector is stopped.');
    case 'RESTARTING':
      return off('The connector is restarting: wait a moment.');
  }
  if (taskState === 'RESTARTING') return off('The task is restarting: wait a moment.');
  if (taskState === 'UNASSIGNED') return off('The task waits for a worker.');
  return on;
}

/** stateWords explains a state in a few words (the badge's tooltip). */
export function stateWords(state: string | undefined): string {
  switch (state) {
    case 'RUNNING':
      return 'Running: its tasks take records.';
    case 'PAUSED':
      return 'Paused: its tasks take no records; the events wait in the stream until it is resumed.';
    case 'STOPPED':
      return 'Stopped: it runs no tasks until it is resumed.';
    case 'FAILED':
      return 'Failed: it stopped on an error; restart it once the cause is fixed.';
    case 'UNASSIGNED':
      return 'Unassigned: it waits for a worker to run it.';
    case 'RESTARTING':
      return 'Restarting: it starts again with its stored configuration.';
    case undefined:
    case '':
      return 'The runtime reports no state.';
    default:
      return state;
  }
}

export interface WorkerLoad {
  /** tasks counts the tasks the worker runs, connectors the connectors with at least one task on it. */
  tasks: number;
  connectors: number;
}

export interface Load {
  byWorker: Record<string, WorkerLoad>;
  /** total counts every task; unassigned the tasks no live worker runs (no worker, or one that left). */
  total: number;
  unassigned: number;
  /** perWorker is the average number of tasks per live worker (0 without workers). */
  perWorker: number;
}

/** loadOf spreads the connectors' tasks over the live workers. */
export function loadOf(workers: { id?: string }[], connectors: { tasks?: { workerId?: string }[] }[]): Load {
  const byWorker: Record<string, WorkerLoad> = {};
  for (const w of workers) if (w.id) byWorker[w.id] = { tasks: 0, connectors: 0 };
  let total = 0;
  let unassigned = 0;
  for (const c of connectors) {
    const seen = new Set<string>();
    for (const t of c.tasks ?? []) {
      total++;
      const w = t.workerId ? byWorker[t.workerId] : undefined;
      if (!w) {
        unassigned++;
        continue;
      }
      w.tasks++;
      if (!seen.has(t.workerId!)) {
        seen.add(t.workerId!);
        w.connectors++;
      }
    }
  }
  const live = Object.keys(byWorker).length;
  return { byWorker, total, unassigned, perWorker: live === 0 ? 0 : (total - unassigned) / live };
}
