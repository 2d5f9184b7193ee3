import { Alert, Anchor, Badge, Button, Center, Code, Collapse, Group, List, Loader, Paper, Select, Stack, Table, Text, Timeline, Title } from '@mantine/core';
import { useQueries, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ConfirmButton, Crumbs, Fields } from '../components/Detail';
import { isGone, RedriveResults, useRedrive } from '../components/Redrive';
import { ErrorAlert, QueryState } from '../components/states';
import { notify, toast } from '../components/toast';
import { RelativeTime } from '../components/Time';
import { exactTime } from '../format';
import { targetPath } from './DeadLetterPage';
import { prettyEvent, REDRIVE_WATCH_MS, redriveToast } from './deadLetters';
import { useBus } from './EventsPage';
import {
  attributesOf,
  REPLAY_MARGIN_MS,
  shortText,
  replayBody,
  replayChoice,
  replayDone,
  replayText,
  stateLabels,
  storedPlace,
  traceModel,
  type EventAttributes,
  type MatchedRule,
  type TargetTrace,
  type TraceStep,
} from './events';
import { TestEventPanel } from './TestEventPanel';

type EventTrace = Schemas['EventTrace'];
type DeadLetter = Schemas['DeadLetter'];

/** How often an unfinished replay started here is read again. */
const REPLAY_POLL_MS = 2000;

/**
 * EventTracePage (/buses/:bus/events/:id?source=…&from=…) shows what happened to one event: the event, every rule of
 * the bus with whether it matched and why not, each matched rule's targets with their attempts (a timeline) and
 * final state, the event's dead letters (redriven from here), a replay of it from an archive of the bus, and a test
 * against the bus's rules as they are now. source is required (event ids are unique per source); from is where the
 * API starts to look for the event when the bus log does not say where it is.
 */
export function EventTracePage() {
  const { bus = '', id = '' } = useParams();
  const [sp] = useSearchParams();
  const source = sp.get('source') ?? '';
  const from = sp.get('from') ?? undefined;
  // A page of its own for each event: what it redrove or replayed is not another's.
  return <TraceView key={`${bus}\n${id}\n${source}`} bus={bus} id={id} source={source} from={from} />;
}

function TraceView({ bus, id, source, from }: { bus: string; id: string; source: string; from?: string }) {
  const base = `/buses/${enc(bus)}`;
  const trace = useQuery({
    queryKey: ['event-trace', bus, id, source, from],
    queryFn: () => api<EventTrace>(`${base}/events/${enc(id)}/trace`, { query: { source, from } }),
    enabled: source !== '',
    retry: false,
  });
  return (
    <Stack maw={1400}>
      <Crumbs items={[['Buses', '/buses'], [bus, base], ['Events', `${base}/events`], [shortText(id)]]} />
      <Group justify="space-between">
        <Title order={1} size="h3" style={{ overflowWrap: 'anywhere' }}>
          Event {id}
        </Title>
        {source && (
          <Button variant="default" onClick={() => void trace.refetch()} loading={trace.isFetching && !trace.isPending}>
            Refresh
          </Button>
        )}
      </Group>
      {source === '' ? (
        <Alert color="yellow" title="Which source?" data-testid="no-source">
          The address does not say the event&apos;s source (?source=…), and event IDs are unique per source only. Open the event from{' '}
          <Anchor component={Link} to={`${base}/events?id=${enc(id)}&window=any`} inherit c="inherit" fw={600}>
            the events of {bus}
          </Anchor>
          .
        </Alert>
      ) : (
        <QueryState query={trace}>{(t) => <Trace bus={bus} trace={t} refetch={() => void trace.refetch()} />}</QueryState>
      )}
    </Stack>
  );
}

function Trace({ bus, trace, refetch }: { bus: string; trace: EventTrace; refetch: () => void }) {
  const base = `/buses/${enc(bus)}`;
  const busQuery = useBus(bus);
  const matchedNames = (trace.rules ?? []).filter((r) => r.match).map((r) => r.rule ?? '');
  // The current targets of the matched rules: a target that logged nothing is listed too, its state unknown.
  const targetQueries = useQueries({
    queries: matchedNames.map((rule) => ({
      queryKey: ['targets', bus, rule],
      queryFn: () => api<Schemas['TargetList']>(`${base}/rules/${enc(rule)}/targets`),
      staleTime: 30_000,
    })),
  });
  const targets: Record<string, string[]> = {};
  matchedNames.forEach((rule, i) => {
    const d = targetQueries[i]?.data;
    if (d) targets[rule] = (d.targets ?? []).map((t) => t.name ?? '').filter((n) => n !== '');
  });
  // The bus's log level now (absent: OFF) says what the log would have recorded; undefined while unknown.
  const level = busQuery.data ? (busQuery.data.logConfig?.level ?? 'OFF') : undefined;
  const m = traceModel(trace, targets, level);
  const stored = trace.event ?? {};
  const attrs = attributesOf(stored.event);
  const [showJson, setShowJson] = useState(false);
  const jsonId = useId();
  return (
    <Stack>
      <Fields
        rows={[
          ['Source', attrs.source],
          ['Type', attrs.type],
          ['Subject', attrs.subject],
          [
            'Stored',
            stored.storedAt && (
              <>
                <RelativeTime value={stored.storedAt} />
                {stored.sequence ? `, ${storedPlace(stored)} of the bus's stream` : ''}
              </>
            ),
          ],
          ['Routed', m.routedAt && <RelativeTime value={m.routedAt} />],
          ['Event time', attrs.time && <RelativeTime value={attrs.time} />],
        ]}
      />
      <div>
        <Button variant="subtle" size="xs" onClick={() => setShowJson((v) => !v)} aria-expanded={showJson} aria-controls={jsonId}>
          {showJson ? "Hide the event's JSON" : "Show the event's JSON"}
        </Button>
        <Collapse expanded={showJson} id={jsonId}>
          <Code block data-testid="event-json" style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }} mt="xs">
            {prettyEvent(stored.event)}
          </Code>
        </Collapse>
      </div>

      <Title order={2} size="h4">
        Rules
      </Title>
      <Text size="sm" data-testid="verdicts-note" data-matched-from={trace.matchedFrom}>
        {m.verdictsNote}
      </Text>
      {m.logNote && (
        <Alert color="yellow" p="sm" data-testid="log-note">
          {m.logNote}
        </Alert>
      )}
      <Title order={3} size="h5">
        Matched ({m.matched.length})
      </Title>
      {m.matched.length === 0 ? (
        <Text size="sm" data-testid="no-match">
          {m.fromLog ? 'No rule matched the event: it went to no target.' : 'No rule of the bus matches the event now.'}
        </Text>
      ) : (
        m.matched.map((r) => <MatchedRuleView key={r.rule} bus={bus} rule={r} />)
      )}
      <Title order={3} size="h5">
        Not matched ({m.notMatched.length})
      </Title>
      {m.notMatched.length === 0 ? (
        <Text size="sm">Every rule of the bus matched the event.</Text>
      ) : (
        <List size="sm" spacing={4} data-testid="not-matched">
          {m.notMatched.map((r) => (
            <List.Item key={r.rule} data-testid="not-matched-rule" data-rule={r.rule} style={{ overflowWrap: 'anywhere' }}>
              <Anchor component={Link} to={`${base}/rules/${enc(r.rule)}`} inherit fw={600}>
                {r.rule}
              </Anchor>
              {r.state === 'DISABLED' && ' (disabled)'}: {r.why}
            </List.Item>
          ))}
        </List>
      )}

      <DeadLetters deadLetters={m.deadLetters} onRedriven={refetch} />

      <Title order={2} size="h4">
        Replay
      </Title>
      <ReplayControl bus={bus} event={attrs} storedAt={stored.storedAt} />

      <Title order={2} size="h4">
        Test against every rule
      </Title>
      <Text size="sm">The verdicts of the bus&apos;s rules as they are now, with why each one that does not match fails.</Text>
      <TestEventPanel bus={bus} event={stored.event} />
    </Stack>
  );
}

/** MatchedRuleView is a matched rule with each of its targets: the final state and the attempts, in order. */
function MatchedRuleView({ bus, rule: r }: { bus: string; rule: MatchedRule }) {
  const rulePath = `/buses/${enc(bus)}/rules/${enc(r.rule)}`;
  return (
    <Paper withBorder p="sm" data-testid="matched-rule" data-rule={r.rule}>
      <Stack gap="xs">
        <Group gap="xs">
          {r.gone ? (
            <Text fw={600}>Rule {r.rule}</Text>
          ) : (
            <Anchor component={Link} to={rulePath} fw={600}>
              Rule {r.rule}
            </Anchor>
          )}
          {r.state === 'DISABLED' && <Badge color="gray">Disabled</Badge>}
        </Group>
        {r.note && (
          <Text size="sm" c="dimmed">
            {r.note}
          </Text>
        )}
        {r.targets.length === 0 ? (
          <Text size="sm">This rule has no targets: the event went nowhere from it.</Text>
        ) : (
          r.targets.map((t) => <TargetView key={t.target} bus={bus} rule={r} target={t} />)
        )}
      </Stack>
    </Paper>
  );
}

function TargetView({ bus, rule, target: t }: { bus: string; rule: MatchedRule; target: TargetTrace }) {
  const s = stateLabels[t.state];
  const to = targetPath({ bus, rule: rule.rule, target: t.target });
  return (
    <Stack gap={6} pl={{ base: 0, sm: 'sm' }} data-testid="target-trace" data-target={t.target} data-state={t.state}>
      <Group gap="xs">
        <Title order={4} size="h6">
          {rule.gone ? (
            `Target ${t.target}`
          ) : (
            <Anchor component={Link} to={to!} inherit>
              Target {t.target}
            </Anchor>
          )}
        </Title>
        <Badge color={s.tone} data-testid="target-state" style={{ minWidth: 'max-content' }}>
          {s.label}
        </Badge>
      </Group>
      <Text size="sm">{t.stateText}</Text>
      {t.steps.length > 0 && (
        // Every step happened: all are active, each bullet in its outcome's colour.
        <Timeline bulletSize={14} lineWidth={2} active={t.steps.length - 1} data-testid="attempts">
          {t.steps.map((step) => (
            <Timeline.Item key={step.key} color={step.tone} title={<StepTitle step={step} />} data-testid="attempt" data-type={step.type}>
              <StepBody step={step} />
            </Timeline.Item>
          ))}
        </Timeline>
      )}
      {t.deadLetters.map((d) => (
        <Text size="sm" key={d.id} style={{ overflowWrap: 'anywhere' }}>
          <Anchor component={Link} to={`/dead-letters/${enc(d.id ?? '')}`} state={{ deadLetter: d }} inherit>
            Dead letter {d.id}
          </Anchor>
          : {d.reason ?? 'no reason given'} (redrive it under Dead letters below)
        </Text>
      ))}
    </Stack>
  );
}

function StepTitle({ step }: { step: TraceStep }) {
  return (
    <Group gap={6} wrap="wrap">
      <Text size="sm" fw={600} span>
        {step.title}
      </Text>
      <Badge color={step.tone} size="sm" style={{ minWidth: 'max-content' }}>
        {step.outcome}
      </Badge>
      <Text size="xs" span>
        <RelativeTime value={step.at} />
      </Text>
    </Group>
  );
}

function StepBody({ step }: { step: TraceStep }) {
  return (
    <Stack gap={2}>
      {step.detail && <Text size="xs">{step.detail}</Text>}
      {step.message && (
        <Text size="xs" style={{ overflowWrap: 'anywhere' }}>
          {step.message}
        </Text>
      )}
      {step.answer && (
        <Text size="xs" style={{ overflowWrap: 'anywhere' }} data-testid="answer">
          It answered: <Code style={{ whiteSpace: 'pre-wrap' }}>{step.answer}</Code>
        </Text>
      )}
      {step.traceId && (
        <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
          Trace {step.traceId}
        </Text>
      )}
    </Stack>
  );
}

/** DeadLetters lists the event's dead letters with their reason; each is redriven to its target from here. */
function DeadLetters({ deadLetters, onRedriven }: { deadLetters: DeadLetter[]; onRedriven: () => void }) {
  const { watch, redrive, clear } = useRedrive();
  const [goneIds, setGoneIds] = useState<Set<string>>(new Set());
  // Once the redrive's watch ends, the trace is read again: its new attempts are in the log.
  const done = watch?.done === true;
  const latest = useRef(onRedriven);
  latest.current = onRedriven;
  useEffect(() => {
    if (done) latest.current();
  }, [done]);
  return (
    <>
      <Title order={2} size="h4">
        Dead letters ({deadLetters.length})
      </Title>
      {watch && <RedriveResults watch={watch} onClose={clear} />}
      {deadLetters.length === 0 ? (
        <Text size="sm" data-testid="no-dead-letters">
          None: no target of the bus gave this event up to the account&apos;s dead letters (a target with a dead-letter bus sends them there instead).
        </Text>
      ) : (
        <Table.ScrollContainer type="native" minWidth={860} aria-label="Dead letters">
          <Table verticalSpacing="xs" data-testid="trace-dead-letters">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>ID</Table.Th>
                <Table.Th>Given up</Table.Th>
                <Table.Th>Target</Table.Th>
                <Table.Th>Reason</Table.Th>
                <Table.Th>Attempts</Table.Th>
                <Table.Th>Action</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {deadLetters.map((d) => (
                <Table.Tr key={d.id} data-testid="trace-dead-letter" data-id={d.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/dead-letters/${enc(d.id ?? '')}`} state={{ deadLetter: d }} size="sm">
                      {d.id}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <RelativeTime value={d.time} />
                  </Table.Td>
                  <Table.Td style={{ overflowWrap: 'anywhere' }}>{[d.rule, d.target].filter(Boolean).join(' / ') || d.connector}</Table.Td>
                  <Table.Td maw={420}>
                    <Code style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{d.reason}</Code>
                    {d.errorClass && (
                      <Text size="xs" mt={2}>
                        {d.errorClass}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{d.attempts}</Table.Td>
                  <Table.Td>
                    {goneIds.has(d.id ?? '') ? (
                      <Text size="sm">Gone</Text>
                    ) : (
                      <ConfirmButton
                        label="Redrive"
                        title={`Redrive dead letter ${d.id}?`}
                        question={`Deliver the event to target ${d.target ?? d.connector} again? Its retry policy applies afresh; the page then looks for ${REDRIVE_WATCH_MS / 1000} s whether it fails again.`}
                        disabled={!!watch && !watch.done}
                        run={() =>
                          redrive({ ids: [d.id ?? ''] }, [d]).catch((err) => {
                            if (!isGone(err)) throw err;
                            setGoneIds((s) => new Set(s).add(d.id ?? ''));
                            onRedriven();
                            return undefined;
                          })
                        }
                        onDone={(r) => {
                          notify(redriveToast(r));
                          onRedriven();
                        }}
                      />
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </>
  );
}

/**
 * ReplayControl offers to replay the event from an archive of its bus that existed when it was stored: the events
 * the archive holds that the bus stored within a second of it, to every rule of the bus. Without such an archive it
 * says why the event cannot be replayed. A replay started here is followed until it ends.
 */
function ReplayControl({ bus, event, storedAt }: { bus: string; event: EventAttributes; storedAt?: string }) {
  const archives = useQuery({
    queryKey: ['archives', bus],
    queryFn: () => api<Schemas['ArchiveList']>(`/buses/${enc(bus)}/archives`, { query: { limit: 100 } }),
    staleTime: 30_000,
  });
  const [picked, setPicked] = useState<string | null>(null);
  const [started, setStarted] = useState<string | undefined>();
  const replay = useQuery({
    queryKey: ['replays', 'one', started],
    queryFn: () => api<Schemas['Replay']>(`/replays/${enc(started ?? '')}`),
    enabled: started !== undefined,
    refetchInterval: (q) => (q.state.data && replayDone(q.state.data) ? false : REPLAY_POLL_MS),
  });
  if (archives.isPending) {
    return (
      <Center p="sm">
        <Loader size="sm" aria-label="Loading" />
      </Center>
    );
  }
  if (archives.isError) return <ErrorAlert error={archives.error} title="Could not read the bus's archives" />;
  const choice = replayChoice(bus, archives.data.archives ?? [], storedAt);
  if (choice.kind !== 'archives' || !storedAt) {
    return (
      <Text size="sm" data-testid="replay-unavailable">
        {choice.kind === 'archives' ? 'The event has no stored time to replay it by.' : choice.text}
      </Text>
    );
  }
  const archive = picked && choice.archives.includes(picked) ? picked : choice.archives[0];
  const at = Date.parse(storedAt);
  const between = `${exactTime(new Date(at - REPLAY_MARGIN_MS).toISOString())} and ${exactTime(new Date(at + REPLAY_MARGIN_MS).toISOString())}`;
  return (
    <Stack gap="xs" data-testid="replay">
      <Text size="sm">
        Replays the events an archive of the bus holds that the bus stored within a second of this one, to every rule of the bus: their targets receive them
        again, with the extension replayname.
      </Text>
      <Group align="flex-end" gap="sm">
        {choice.archives.length > 1 && <Select label="Archive" data={choice.archives} value={archive} onChange={setPicked} allowDeselect={false} />}
        <ConfirmButton
          label="Replay"
          title="Replay this event?"
          question={`Replay the events archive ${archive} holds that bus ${bus} stored between ${between} to every rule of the bus? This event is among them if the archive's pattern kept it; the other events stored within those two seconds are replayed too.`}
          run={() => api<Schemas['Replay']>('/replays', { body: replayBody(archive, event, storedAt, new Date()) })}
          onDone={(r) => {
            toast(`Replay ${r.name} started`);
            setStarted(r.name);
          }}
        />
      </Group>
      {started && (
        <Alert color={replay.data?.state === 'FAILED' ? 'red' : replay.data && replayDone(replay.data) ? 'green' : 'blue'} p="sm" role="status" data-testid="replay-status" data-state={replay.data?.state ?? ''}>
          {replay.data ? replayText(replay.data) : `Replay ${started}: starting…`}
          {replay.data && replayDone(replay.data) && ' Refresh to see the new attempts.'}
        </Alert>
      )}
      <ErrorAlert error={replay.error} title="Could not follow the replay" />
    </Stack>
  );
}
