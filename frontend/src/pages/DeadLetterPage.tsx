import { Alert, Anchor, Badge, Code, Group, List, Stack, Text, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ConfirmButton, Crumbs, Fields } from '../components/Detail';
import { eventDeadLetters, isGone, RedriveResults, useRedrive } from '../components/Redrive';
import { ErrorAlert, QueryState } from '../components/states';
import { notify, toast } from '../components/toast';
import { RelativeTime } from '../components/Time';
import { entryText, eventIdOf, findDeadLetter, presence, prettyEvent, REDRIVE_WATCH_MS, redriveToast } from './deadLetters';

/** How often the page checks that the dead letter still exists (another tab or user may redrive or discard it). */
const CHECK_MS = 10_000;

type DeadLetter = Schemas['DeadLetter'];

const classWords: Record<string, string> = {
  permanent: 'permanent: the target refused the event; retrying would not help',
  'retries-exhausted': 'retries exhausted: every attempt failed',
  transform: 'transform: the input transformer could not make the data',
};

export function targetPath(d: { bus?: string; rule?: string; target?: string }): string | undefined {
  if (!d.bus || !d.rule || !d.target) return undefined;
  return `/buses/${enc(d.bus)}/rules/${enc(d.rule)}/targets/${enc(d.target)}`;
}

export function DeadLetterPage() {
  const id = useParams().id ?? '';
  // A page of its own for each dead letter (a link to another one's keeps the route): what it knows, watches and was
  // told is not another's.
  return <DeadLetterView key={id} id={id} />;
}

function DeadLetterView({ id }: { id: string }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const fromList = (useLocation().state as { deadLetter?: DeadLetter } | null)?.deadLetter;
  const [result, setResult] = useState<{ failed: boolean; lines: string[] } | undefined>();
  // known is the dead letter as last seen (from the list, then from each check): shown as it was once it is gone.
  const known = useRef<DeadLetter | undefined>(fromList?.id === id ? fromList : undefined);
  // The API has no read of one dead letter: the page reads its event's dead letters (?eventId=) to know whether it
  // still exists and which others the event has (a new one after a redrive that failed again); without its event,
  // the whole list. Checked again every 10 seconds: the page knows when it is stale.
  const query = useQuery({
    queryKey: ['dead-letters', 'one', id],
    queryFn: async () => {
      const k = known.current;
      const eventId = k && eventIdOf(k);
      if (k && eventId) return presence(id, await eventDeadLetters(eventId, k.time));
      const d = await findDeadLetter((nextToken) => api<Schemas['DeadLetterList']>('/dead-letters', { query: { nextToken, limit: 500 } }), id);
      return { current: d, others: [] as DeadLetter[] };
    },
    refetchInterval: CHECK_MS,
    retry: false,
  });
  if (query.data?.current) known.current = query.data.current;
  const { watch, redrive } = useRedrive();
  // goneNow is set when a redrive or discard of this page was told the dead letter no longer exists.
  const [goneNow, setGoneNow] = useState(false);
  const shown = query.data?.current ?? known.current;
  const gone = goneNow || (query.data !== undefined && !query.data.current);
  const others = query.data?.others ?? [];
  const selection = { ids: [id] };
  const lost = (err: unknown) => {
    if (!isGone(err)) throw err;
    setGoneNow(true);
    void query.refetch();
    return undefined;
  };
  return (
    <Stack>
      <Crumbs items={[['Dead letters', '/dead-letters'], [id]]} />
      {result && (
        <Alert color={result.failed ? 'red' : 'green'} title="Result" role={result.failed ? 'alert' : 'status'}>
          {result.lines.map((r) => (
            <div key={r}>{r}</div>
          ))}
        </Alert>
      )}
      <Group justify="space-between">
        <Title order={1} size="h3">
          Dead letter {id} {shown?.errorClass && <Badge color="red">{shown.errorClass}</Badge>}
        </Title>
        {query.data?.current && !gone && (!watch || watch.done) && (
          <Group>
            <ConfirmButton
              label="Redrive"
              title="Redrive?"
              question={`Deliver the original event to its target again? The target's retry policy applies afresh; the page then looks for ${REDRIVE_WATCH_MS / 1000} s whether it fails again.`}
              run={() => redrive(selection, shown ? [shown] : []).catch(lost)}
              onDone={(r) => {
                notify(redriveToast(r));
                setResult(undefined);
                void query.refetch();
              }}
            />
            <ConfirmButton
              label="Discard"
              color="red"
              title="Discard?"
              question="Discard this dead letter? The event is lost. This cannot be undone."
              run={() => api<Schemas['DiscardResult']>('/dead-letters', { method: 'DELETE', body: selection }).catch(lost)}
              onDone={(r) => {
                qc.invalidateQueries({ queryKey: ['dead-letters'] });
                if (!r) return;
                if ((r.failedCount ?? 0) > 0) setResult({ failed: true, lines: (r.entries ?? []).map((e) => entryText(e, 'discarded')) });
                else {
                  toast(`Dead letter ${id} discarded`);
                  navigate('/dead-letters');
                }
              }}
            />
          </Group>
        )}
      </Group>
      {watch && <RedriveResults watch={watch} />}
      {gone && (
        <Alert color="yellow" title="This dead letter no longer exists" data-testid="dead-letter-gone">
          <Text size="sm">
            {watch
              ? 'It was redriven from this page: it left the list.'
              : 'It was redriven or discarded since (on another page, in another tab or by someone else), or it never existed. There is nothing to redrive.'}
            {shown ? ' What it held is shown below as it was.' : ''}
          </Text>
          {others.length > 0 && (
            <Text size="sm" mt={4} data-testid="other-dead-letters">
              Its event has {others.length === 1 ? 'another dead letter' : 'other dead letters'}:{' '}
              {others.map((o, i) => (
                <span key={o.id}>
                  {i > 0 && ', '}
                  <Anchor component={Link} to={`/dead-letters/${enc(o.id ?? '')}`} state={{ deadLetter: o }} inherit c="inherit" fw={600}>
                    dead letter {o.id}
                  </Anchor>
                </span>
              ))}
              .
            </Text>
          )}
        </Alert>
      )}
      {shown ? <DeadLetterFields d={shown} /> : <QueryState query={query}>{() => null}</QueryState>}
      {shown && <ErrorAlert error={query.error} title="Could not check that it still exists" />}
      {(result || watch || gone) && (
        <List size="sm">
          <List.Item>
            <Anchor component={Link} to="/dead-letters">
              Back to the dead letters
            </Anchor>
          </List.Item>
        </List>
      )}
    </Stack>
  );
}

const wrap = { whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' } as const;

/** DeadLetterFields shows what a dead letter holds: why and where it was given up, and its original event. */
function DeadLetterFields({ d }: { d: DeadLetter }) {
  return (
    <>
      <Fields
        rows={[
          // Wrapped rather than scrolled: a box that scrolls would have to take the keyboard focus.
          ['Reason', d.reason ? <Code block style={wrap}>{d.reason}</Code> : undefined],
          ['Error class', d.errorClass ? classWords[d.errorClass] ?? d.errorClass : undefined],
          ['Attempts', d.attempts !== undefined ? String(d.attempts) : undefined],
          ['Connector', d.connector ? <Code>{d.connector}</Code> : undefined],
          [
            'Target',
            targetPath(d) ? (
              <Anchor component={Link} to={targetPath(d)!}>
                {[d.bus, d.rule, d.target].join(' / ')}
              </Anchor>
            ) : undefined,
          ],
          ['Time', d.time && <RelativeTime value={d.time} />],
        ]}
      />
      <Title order={2} size="h4">
        Original event
      </Title>
      <Code block data-testid="dead-letter-event" style={wrap}>
        {prettyEvent(d.event)}
      </Code>
    </>
  );
}
