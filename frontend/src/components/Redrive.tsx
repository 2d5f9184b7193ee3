import { Alert, Anchor, List, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ApiError } from '../api/problem';
import {
  eventIdOf,
  firstOutcomes,
  followedOf,
  listAll,
  MAX_FOLLOWED,
  outcomeText,
  redriveSummary,
  REDRIVE_WATCH_MS,
  scanFrom,
  watchRedrive,
  type Followed,
  type RedriveOutcome,
} from '../pages/deadLetters';

type DeadLetter = Schemas['DeadLetter'];

/** isGone reports whether the API said a selected dead letter does not exist (404 DeadLetterNotFound). */
export function isGone(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404 && err.problem.code === 'DeadLetterNotFound';
}

/**
 * eventDeadLetters reads the dead letters of one event (?eventId=) from a minute before since (a dead letter of it
 * given up then), every page, at most 5 (each page scans up to 10,000 dead letters).
 */
export function eventDeadLetters(eventId: string, since: string | undefined): Promise<DeadLetter[]> {
  return listAll(
    (nextToken) => api<Schemas['DeadLetterList']>('/dead-letters', { query: { eventId, from: scanFrom(since), limit: 500, nextToken } }),
    5,
  );
}

export interface RedriveWatch {
  outcomes: RedriveOutcome[];
  /** done is false while the page still looks for new dead letters. */
  done: boolean;
}

/**
 * useRedrive redrives dead letters and follows what became of them (docs/console.md "Dead letters"). redrive takes
 * the selection the API is sent and the dead letters the page shows of it (those it can follow, at most
 * MAX_FOLLOWED): it reads their events' dead letters first, sends the redrive, then looks for a new dead letter
 * of each event for REDRIVE_WATCH_MS. It throws what the API answers (ApiError; isGone for a dead letter that no
 * longer exists).
 */
export function useRedrive() {
  const qc = useQueryClient();
  const [watch, setWatch] = useState<RedriveWatch | undefined>();
  const alive = useRef(true);
  const run = useRef(0);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);
  async function redrive(selection: Schemas['DeadLetterSelection'], known: DeadLetter[]): Promise<Schemas['RedriveResult']> {
    const mine = ++run.current;
    const current = () => alive.current && run.current === mine;
    const toFollow = known.filter((d) => d.id && eventIdOf(d)).slice(0, MAX_FOLLOWED);
    const before = await Promise.all(toFollow.map((d) => eventDeadLetters(eventIdOf(d)!, d.time).catch(() => undefined)));
    const followed = toFollow.map((d, i) => (before[i] ? followedOf(d, before[i]) : undefined)).filter((f): f is Followed => f !== undefined);
    const r = await api<Schemas['RedriveResult']>('/dead-letters/redrive', { body: selection });
    const first = firstOutcomes(r, followed);
    setWatch({ outcomes: first, done: false });
    void qc.invalidateQueries({ queryKey: ['dead-letters'] });
    void watchRedrive(first, followed, (f) => eventDeadLetters(f.eventId, f.time), (o) => current() && setWatch({ outcomes: o, done: false }), {
      stopped: () => !current(),
    }).then((o) => {
      if (!current()) return;
      setWatch({ outcomes: o, done: true });
      void qc.invalidateQueries({ queryKey: ['dead-letters'] });
    });
    return r;
  }
  return { watch, redrive, clear: () => setWatch(undefined) };
}

/**
 * OutcomeLine is one outcome; the new dead letter's link takes the alert's text colour (the link colour is 4.1:1
 * on the red alert's background) and is told from the text by its underline and weight.
 */
function OutcomeLine({ o }: { o: RedriveOutcome }) {
  if (o.kind !== 'again') return <>{outcomeText(o)}</>;
  const d = o.deadLetter;
  return (
    <>
      Dead letter {o.id} (event {o.eventId}): dead-lettered again as{' '}
      <Anchor component={Link} to={`/dead-letters/${enc(d.id ?? '')}`} state={{ deadLetter: d }} data-testid="new-dead-letter" inherit c="inherit" fw={600}>
        dead letter {d.id}
      </Anchor>{' '}
      — {d.reason ?? 'no reason given'}
    </>
  );
}

/** RedriveResults says what became of each redriven dead letter, updated while the page looks for new ones. */
export function RedriveResults({ watch, onClose }: { watch: RedriveWatch; onClose?: () => void }) {
  const bad = watch.outcomes.some((o) => o.kind === 'again' || o.kind === 'not-redriven');
  const color = bad ? 'red' : watch.done ? 'green' : 'blue';
  return (
    <Alert color={color} title="Redrive" withCloseButton={!!onClose} closeButtonLabel="Dismiss the redrive results" onClose={onClose} role="status" aria-live="polite" data-testid="redrive-results" data-done={watch.done}>
      <Text size="sm" fw={500} data-testid="redrive-summary">
        {redriveSummary(watch.outcomes)}
        {watch.done ? '' : ` Looking for new dead letters of the events for ${REDRIVE_WATCH_MS / 1000} s…`}
      </Text>
      <List size="sm" mt={4}>
        {watch.outcomes.map((o) => (
          <List.Item key={o.id} data-testid="redrive-outcome" data-kind={o.kind} style={{ overflowWrap: 'anywhere' }}>
            <OutcomeLine o={o} />
          </List.Item>
        ))}
      </List>
    </Alert>
  );
}
