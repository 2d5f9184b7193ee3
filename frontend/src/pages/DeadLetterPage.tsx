import { Alert, Anchor, Badge, Code, Group, List, Stack, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ConfirmButton, Crumbs, Fields } from '../components/Detail';
import { QueryState } from '../components/states';
import { RelativeTime } from '../components/Time';
import { entryText, findDeadLetter, prettyEvent } from './deadLetters';

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
  const qc = useQueryClient();
  const navigate = useNavigate();
  const fromList = (useLocation().state as { deadLetter?: DeadLetter } | null)?.deadLetter;
  const [result, setResult] = useState<{ failed: boolean; lines: string[] } | undefined>();
  const query = useQuery({
    queryKey: ['dead-letters', 'one', id],
    queryFn: async () => {
      const d = await findDeadLetter((nextToken) => api<Schemas['DeadLetterList']>('/dead-letters', { query: { nextToken, limit: 500 } }), id);
      if (!d) throw new Error(`Dead letter ${id} is not in the list: it may have been redriven or discarded.`);
      return d;
    },
    initialData: fromList?.id === id ? fromList : undefined,
    retry: false,
  });
  const selection = { ids: [id] };
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
          Dead letter {id} {query.data?.errorClass && <Badge color="red">{query.data.errorClass}</Badge>}
        </Title>
        {query.data && (
          <Group>
            <ConfirmButton
              label="Redrive"
              title="Redrive?"
              question="Deliver the original event to its target again? The target's retry policy applies afresh."
              run={() => api<Schemas['RedriveResult']>('/dead-letters/redrive', { body: selection })}
              onDone={(r) => {
                setResult({ failed: (r.failedCount ?? 0) > 0, lines: (r.entries ?? []).map((e) => entryText(e, 'redriven')) });
                // The lists are read again; this page keeps what it shows (a redriven dead letter leaves the list).
                qc.invalidateQueries({ queryKey: ['dead-letters'], predicate: (q) => q.queryKey[1] !== 'one' });
              }}
            />
            <ConfirmButton
              label="Discard"
              color="red"
              title="Discard?"
              question="Discard this dead letter? The event is lost. This cannot be undone."
              run={() => api<Schemas['DiscardResult']>('/dead-letters', { method: 'DELETE', body: selection })}
              onDone={(r) => {
                qc.invalidateQueries({ queryKey: ['dead-letters'] });
                if ((r.failedCount ?? 0) > 0) setResult({ failed: true, lines: (r.entries ?? []).map((e) => entryText(e, 'discarded')) });
                else navigate('/dead-letters');
              }}
            />
          </Group>
        )}
      </Group>
      <QueryState query={query}>
        {(d) => (
          <>
            <Fields
              rows={[
                ['Reason', d.reason ? <Code block>{d.reason}</Code> : undefined],
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
            <Code block data-testid="dead-letter-event">
              {prettyEvent(d.event)}
            </Code>
          </>
        )}
      </QueryState>
      {result && (
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
