import { ActionIcon, Anchor, Button, Code, Group, JsonInput, Paper, SimpleGrid, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { IconChevronDown, IconChevronRight } from '@tabler/icons-react';
import { Fragment, memo, useCallback, useEffect, useRef, useState, useSyncExternalStore, type FormEvent, type ReactNode } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { enc } from '../api/client';
import { ApiError } from '../api/problem';
import { session, subscribe } from '../api/session';
import { Crumbs } from '../components/Detail';
import { exactTime } from '../format';
import {
  cleared,
  clockTime,
  disconnectReason,
  emptyView,
  endedReason,
  eventFields,
  filterFromSearch,
  filterToSearch,
  patternProblems,
  paused,
  rate,
  rateText,
  received,
  resumed,
  shownEvents,
  skippedBy,
  skippedText,
  statusText,
  TAIL_KEEP,
  TAIL_MAX_RATE,
  tailQuery,
  type Arrival,
  type StoredEvent,
  type TailFilter,
  type TailStatus,
  type TailView,
} from './tail';
import { eventTracePath, storedKey } from './events';
import { streamTail } from './tailStream';
import { PatternProblems } from '../components/PatternProblems';

// How often the events received are added to the list and the rate is measured again: a tail sends up to 100
// events a second, and rendering the list at each would keep the browser busy for nothing.
const FLUSH_MS = 250;

// Times of day in the browser's zone and locale.
const clock = (ms: number) => clockTime(ms);

/** Run is the tail the user asked for: its filter; n, counted up by every reconnect; stopped, by the user. */
interface Run {
  filter: TailFilter;
  n: number;
  stopped: boolean;
}

/**
 * TailPage (/buses/:bus/tail) streams the events the bus stores from now on that match a filter (type, source,
 * subject, event pattern), newest first, the last 500 kept (streamTail reads GET /api/v1/buses/{bus}/tail). The
 * filter lives in the page's address; the tail starts when the user says so, and stops when the user leaves the
 * page or picks another account. Pause freezes the list (events go on being counted), Resume shows them; the rate
 * and the events the server left out (over 100 a second) are shown; each event opens to its JSON and links to its
 * trace.
 */
export function TailPage() {
  const bus = useParams().bus ?? '';
  // Another bus, or another account picked in the header, is another tail: the page starts afresh (the one open is
  // closed) rather than mix two streams in one list.
  const account = useSyncExternalStore(subscribe, session).account;
  return <Tail key={`${account ?? ''}/${bus}`} bus={bus} />;
}

function Tail({ bus }: { bus: string }) {
  const [search, setSearch] = useSearchParams();
  const [form, setForm] = useState<TailFilter>(() => filterFromSearch(search));
  // The pattern's problems are said once the user left the field or pressed Start, not at the first keystroke.
  const [checked, setChecked] = useState(false);
  const [serverPatternError, setServerPatternError] = useState<string>();
  const [run, setRun] = useState<Run>();
  const [status, setStatus] = useState<TailStatus>({ state: 'idle' });
  const [view, setView] = useState<TailView>(emptyView);
  const [now, setNow] = useState(() => Date.now());
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const queue = useRef<Arrival[]>([]);
  const live = status.state === 'connecting' || status.state === 'listening';

  useEffect(() => {
    if (!run || run.stopped) return;
    const abort = new AbortController();
    setStatus({ state: 'connecting' });
    streamTail(
      bus,
      tailQuery(run.filter),
      {
        ready: () => setStatus({ state: 'listening', since: Date.now() }),
        event: (e) => void queue.current.push({ event: e, at: Date.now() }),
        skipped: (n) => setView((v) => skippedBy(v, n)),
      },
      abort.signal,
    ).then(
      () => !abort.signal.aborted && setStatus({ state: 'disconnected', reason: endedReason }),
      (err: unknown) => {
        if (abort.signal.aborted) return;
        setStatus({ state: 'disconnected', reason: disconnectReason(err, Date.now(), clock) });
        if (err instanceof ApiError && err.problem.field === 'pattern') setServerPatternError(err.message);
      },
    );
    // Leaving the page, stopping or connecting again closes the stream, which frees one of the account's tails.
    return () => abort.abort();
  }, [bus, run]);

  useEffect(() => {
    const flush = () => {
      const batch = queue.current;
      queue.current = [];
      if (batch.length > 0) setView((v) => received(v, batch));
      setNow(Date.now());
    };
    if (!live) return;
    const t = setInterval(flush, FLUSH_MS);
    return () => {
      clearInterval(t);
      flush(); // what came just before the stream ended
    };
  }, [live]);

  const problems = checked ? patternProblems(form) : [];
  const set = (patch: Partial<TailFilter>) => setForm((f) => ({ ...f, ...patch }));

  function start(e: FormEvent) {
    e.preventDefault();
    setChecked(true);
    if (patternProblems(form).length > 0) return;
    setServerPatternError(undefined);
    setSearch(filterToSearch(form), { replace: true });
    queue.current = [];
    setView(emptyView);
    setExpanded(new Set());
    setRun((r) => ({ filter: form, n: (r?.n ?? 0) + 1, stopped: false }));
  }
  function stop() {
    setRun((r) => r && { ...r, stopped: true });
    setStatus({ state: 'disconnected', reason: 'you stopped it.' });
  }
  function reconnect() {
    setRun((r) => r && { ...r, n: r.n + 1, stopped: false });
  }
  // Stable, so that the memoised list does not render again for it.
  const toggle = useCallback(
    (key: string) =>
      setExpanded((s) => {
        const next = new Set(s);
        if (!next.delete(key)) next.add(key);
        return next;
      }),
    [],
  );

  const events = shownEvents(view);
  const isPaused = view.frozen !== undefined;
  const patternError: ReactNode =
    problems.length > 0 ? (
      <PatternProblems problems={problems} />
    ) : (
      serverPatternError
    );

  return (
    <Stack maw={1400}>
      <Crumbs items={[['Buses', '/buses'], [bus, `/buses/${enc(bus)}`], ['Live tail']]} />
      <Title order={1} size="h3">
        Live tail of {bus}
      </Title>
      <Text size="sm">
        The events the bus stores from the moment the tail listens that match the filter, newest first; the page keeps the last {TAIL_KEEP}. A tail
        sends at most {TAIL_MAX_RATE} events a second and is for watching: targets receive every event whatever it shows.
      </Text>
      <Paper withBorder p="sm" component="form" onSubmit={start} aria-label="Filter" noValidate>
        <Stack gap="xs">
          <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm" verticalSpacing="xs">
            <TextInput label="Type" placeholder="Any type, or order.created" value={form.type} onChange={(e) => set({ type: e.currentTarget.value })} />
            <TextInput label="Source" placeholder="Any source, or shop.web" value={form.source} onChange={(e) => set({ source: e.currentTarget.value })} />
            <TextInput label="Subject" placeholder="Any subject" value={form.subject} onChange={(e) => set({ subject: e.currentTarget.value })} />
          </SimpleGrid>
          <JsonInput
            label="Event pattern"
            description='Optional, as a rule’s: {"data": {"amount": [{"numeric": [">", 100]}]}}'
            autosize
            minRows={2}
            maxRows={10}
            value={form.pattern}
            onChange={(v) => {
              set({ pattern: v });
              setServerPatternError(undefined);
            }}
            onBlur={() => setChecked(true)}
            error={patternError}
            // JsonInput shows validationError instead of error while the text is not JSON: the same words.
            validationError={patternError}
          />
          <Group justify="flex-end" gap="xs">
            {live && (
              <Button variant="default" onClick={stop}>
                Stop
              </Button>
            )}
            <Button type="submit">{live ? 'Restart with this filter' : 'Start'}</Button>
          </Group>
        </Stack>
      </Paper>
      <Group justify="space-between" gap="xs" align="center">
        <Group gap="xs">
          <Text size="sm" role="status" data-testid="tail-status" data-state={status.state}>
            {statusText(status, clock)}
          </Text>
          {status.state === 'disconnected' && run && (
            <Button size="xs" variant="light" onClick={reconnect}>
              Reconnect
            </Button>
          )}
        </Group>
        <Text size="sm" data-testid="tail-rate">
          {rateText(status.state === 'listening' ? rate(view.arrivals, now, status.since) : 0)}
          {view.skipped > 0 && <span data-testid="tail-skipped">{`; ${skippedText(view.skipped)}`}</span>}
        </Text>
      </Group>
      <Group gap="xs">
        <Button size="xs" variant="default" onClick={() => setView(isPaused ? resumed : paused)} disabled={!isPaused && !live}>
          {isPaused ? 'Resume' : 'Pause'}
        </Button>
        <Button size="xs" variant="default" onClick={() => setView(cleared)} disabled={events.length === 0 && view.skipped === 0 && view.newWhilePaused === 0}>
          Clear
        </Button>
        {isPaused && (
          <Text size="sm" data-testid="tail-paused">
            {view.newWhilePaused} new while paused
          </Text>
        )}
      </Group>
      {events.length === 0 ? (
        <Text c="dimmed" size="sm" p="md" data-testid="tail-empty">
          {live ? 'No event yet: they appear here as the bus stores them.' : 'No events. Start the tail to see the events the bus stores from then on.'}
        </Text>
      ) : (
        <EventTable bus={bus} events={events} expanded={expanded} toggle={toggle} />
      )}
    </Stack>
  );
}

/**
 * EventTable lists the events, each opening to its JSON. It is memoised: the page renders four times a second
 * while the tail listens (the rate), and the list only needs to when its events change.
 */
const EventTable = memo(function EventTable({
  bus,
  events,
  expanded,
  toggle,
}: {
  bus: string;
  events: StoredEvent[];
  expanded: ReadonlySet<string>;
  toggle: (key: string) => void;
}) {
  return (
    // The list scrolls in its own region, under its sticky header, so that the status and the buttons stay in sight.
    <Table.ScrollContainer type="native" minWidth={860} aria-label="Events" style={{ maxHeight: '70vh', overflowY: 'auto' }}>
      <Table striped verticalSpacing={6} stickyHeader data-testid="tail-events">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={44}>
              <VisuallyHidden>Event JSON</VisuallyHidden>
            </Table.Th>
            <Table.Th>Stored</Table.Th>
            <Table.Th>Type</Table.Th>
            <Table.Th>Source</Table.Th>
            <Table.Th>ID</Table.Th>
            <Table.Th>Subject</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {events.map((s) => (
            <EventRow key={storedKey(s)} bus={bus} s={s} open={expanded.has(storedKey(s))} toggle={toggle} />
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
});

const EventRow = memo(function EventRow({ bus, s, open, toggle }: { bus: string; s: StoredEvent; open: boolean; toggle: (key: string) => void }) {
  const f = eventFields(s);
  const seq = s.sequence ?? 0;
  const key = storedKey(s);
  const detail = `tail-event-${key.replace('.', '-')}`;
  const at = s.storedAt ? Date.parse(s.storedAt) : NaN;
  return (
    <Fragment>
      <Table.Tr data-testid="tail-event" data-event-id={f.id} data-sequence={seq}>
        <Table.Td>
          <ActionIcon
            variant="subtle"
            color="gray"
            size="sm"
            onClick={() => toggle(key)}
            aria-expanded={open}
            aria-controls={open ? detail : undefined}
            aria-label={`${open ? 'Hide' : 'Show'} the JSON of event ${f.id || `number ${seq}`}`}
          >
            {open ? <IconChevronDown size={16} aria-hidden /> : <IconChevronRight size={16} aria-hidden />}
          </ActionIcon>
        </Table.Td>
        <Table.Td>
          <time dateTime={s.storedAt} title={exactTime(s.storedAt)} style={{ whiteSpace: 'nowrap' }}>
            {Number.isNaN(at) ? s.storedAt : clockTime(at)}
          </time>
        </Table.Td>
        <Table.Td style={{ overflowWrap: 'anywhere' }}>{f.type}</Table.Td>
        <Table.Td style={{ overflowWrap: 'anywhere' }}>{f.source}</Table.Td>
        <Table.Td style={{ overflowWrap: 'anywhere' }}>
          {f.id && f.source ? (
            <Anchor component={Link} to={eventTracePath(bus, f.id, f.source, s.storedAt)} size="sm" title="What happened to this event">
              {f.id}
            </Anchor>
          ) : (
            f.id
          )}
        </Table.Td>
        <Table.Td style={{ overflowWrap: 'anywhere' }}>{f.subject}</Table.Td>
      </Table.Tr>
      {open && (
        <Table.Tr id={detail}>
          <Table.Td colSpan={6}>
            <Code block style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
              {JSON.stringify(s.event, null, 2)}
            </Code>
          </Table.Td>
        </Table.Tr>
      )}
    </Fragment>
  );
});
