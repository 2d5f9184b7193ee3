import { describe, expect, it } from 'vitest';
import { confirmText, connectorActionOrder, connectorActions, loadOf, needsConfirmation, stateWords, taskRestart, type ConnectorAction } from './runtime';

/** enabled lists the actions a state offers, in the page's order. */
function enabled(state: string | undefined): ConnectorAction[] {
  const a = connectorActions(state);
  return connectorActionOrder.filter((k) => a[k].enabled);
}

describe('connectorActions', () => {
  it.each([
    ['RUNNING', ['pause', 'stop', 'restart']],
    ['PAUSED', ['resume', 'stop']],
    ['STOPPED', ['resume']],
    ['FAILED', ['stop', 'restart']],
    ['UNASSIGNED', ['pause', 'stop']],
    ['RESTARTING', []],
    // A state this console does not know: the runtime decides.
    ['DEGRADED', ['pause', 'resume', 'stop', 'restart']],
    [undefined, ['pause', 'resume', 'stop', 'restart']],
  ])('%s offers %j', (state, want) => {
    expect(enabled(state)).toEqual(want);
  });

  it('says why every disabled action is disabled', () => {
    for (const s of ['RUNNING', 'PAUSED', 'STOPPED', 'FAILED', 'UNASSIGNED', 'RESTARTING']) {
      for (const [a, st] of Object.entries(connectorActions(s))) {
        if (!st.enabled) expect(st.reason, `${s} ${a}`).toMatch(/\.$/);
        else expect(st.reason, `${s} ${a}`).toBeUndefined();
      }
    }
  });

  it('never offers resume while running, nor pause, stop or restart once stopped', () => {
    expect(connectorActions('RUNNING').resume.enabled).toBe(false);
    const stopped = connectorActions('STOPPED');
    expect([stopped.pause.enabled, stopped.stop.enabled, stopped.restart.enabled]).toEqual([false, false, false]);
  });
});

describe('needsConfirmation', () => {
  it.each([
    ['stop', true],
    ['restart', true],
    ['pause', false],
    ['resume', false],
  ] as const)('%s: %s', (a, want) => {
    expect(needsConfirmation(a)).toBe(want);
  });

  it('asks in words what happens', () => {
    expect(confirmText('stop', 'target hook')).toMatch(/^Stop target hook\? Its tasks end/);
    expect(confirmText('restart', 'the router')).toMatch(/^Restart the router\? .*counters start from zero\.$/);
  });
});

describe('taskRestart', () => {
  it.each([
    ['RUNNING', 'RUNNING', true],
    ['RUNNING', 'FAILED', true],
    ['FAILED', 'FAILED', true],
    ['PAUSED', 'PAUSED', false],
    ['STOPPED', undefined, false],
    ['RESTARTING', 'RUNNING', false],
    ['RUNNING', 'RESTARTING', false],
    ['RUNNING', 'UNASSIGNED', false],
  ])('connector %s, task %s: %s', (c, t, want) => {
    expect(taskRestart(c, t).enabled).toBe(want);
  });
});

describe('stateWords', () => {
  it.each([
    ['PAUSED', /^Paused: /],
    ['FAILED', /^Failed: /],
    [undefined, /no state/],
    ['SOMETHING', /^SOMETHING$/],
  ])('%s', (s, want) => {
    expect(stateWords(s)).toMatch(want);
  });
});

describe('loadOf', () => {
  it('counts the tasks and connectors of every live worker, and the tasks no live worker runs', () => {
    const load = loadOf(
      [{ id: 'w1' }, { id: 'w2' }, { id: 'idle' }],
      [
        { tasks: [{ workerId: 'w1' }, { workerId: 'w1' }, { workerId: 'w2' }] },
        { tasks: [{ workerId: 'w2' }] },
        { tasks: [{ workerId: '' }, { workerId: 'gone' }] },
        { tasks: [] },
        {},
      ],
    );
    expect(load.byWorker).toEqual({ w1: { tasks: 2, connectors: 1 }, w2: { tasks: 2, connectors: 2 }, idle: { tasks: 0, connectors: 0 } });
    expect([load.total, load.unassigned]).toEqual([6, 2]);
    expect(load.perWorker).toBeCloseTo(4 / 3);
  });

  it('is empty without workers', () => {
    expect(loadOf([], [{ tasks: [{ workerId: 'w1' }] }])).toEqual({ byWorker: {}, total: 1, unassigned: 1, perWorker: 0 });
  });
});
