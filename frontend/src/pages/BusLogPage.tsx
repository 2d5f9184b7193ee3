import {
  ActionIcon,
  Anchor,
  Badge,
  Button,
  Center,
  Code,
  Group,
  Loader,
  Paper,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Title,
  VisuallyHidden,
} from '@mantine/core';
import { IconChevronDown, IconChevronRight } from '@tabler/icons-react';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useEffect, useState, type FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { Crumbs } from '../components/Detail';
import { ErrorAlert } from '../components/states';
import { useNow } from '../components/Time';
import { toast } from '../components/toast';
import { exactTime } from '../format';
import {
  checkLogFilters,
  defaultLogFilters,
  emptyText,
  eventStoredAt,
  levelChoices,
  levelColor,
  levelFilterChoices,
  logFiltersFromSearch,
  logFiltersSet,
  logFiltersToSearch,
  logPatch,
  logQuery,
  logSettingsOf,
  logTime,
  RECORD_TYPES,
  recordSummary,
  SCAN_PER_PAGE,
  settingsToast,
  windowChoices,
  type Bus,
  type BusLogRecord,
  type LevelFilter,
  type LogFilterErrors,
  type LogFilters,
  type LogSettings,
  type Window,
} from './busLog';
import { eventTracePath } from './events';

/** useBus reads the bus (its log config); the key is the one the bus's other pages read it with. */
function useBus(bus: string) {
  return useQuery({ queryKey: ['buses', 'one', bus], queryFn: () => api<Bus>(`/buses/${enc(bus)}`), staleTime: 30_000 });
}

/** withValue adds value to a select's choices when they lack it (a name from the address that no longer exists). */
const withValue = (names: string[], value: string) => (value && !names.includes(value) ? [value, ...names] : names);

/**
 * BusLogPage (/buses/:bus/log) sets what the bus's log records (its logConfig: level and include detail, saved
 * with PATCH /api/v1/buses/{bus}) and lists the records (GET /api/v1/buses/{bus}/log), oldest first, with filters
 * kept in the page's address (time, level, type, rule, target, event source and ID) and "Load more" for the next
 * page. Each record is said in one line, links to its event's trace and opens to its JSON.
 */
export function BusLogPage() {
  const bus = useParams().bus ?? '';
  const base = `/buses/${enc(bus)}`;
  const [search, setSearch] = useSearchParams();
  const applied = logFiltersFromSearch(search);
  const [form, setForm] = useState<LogFilters>(applied);
  const [errors, setErrors] = useState<LogFilterErrors>({});
  // The time a window such as "last hour" ends at: taken when the filters are applied or the list refreshed.
  const [at, setAt] = useState(() => Date.now());
  // The address changed by other means (the browser's back and forward): the form follows it.
  const searchText = search.toString();
  useEffect(() => {
    setForm(logFiltersFromSearch(new URLSearchParams(searchText)));
    setErrors({});
  }, [searchText]);
  const busQuery = useBus(bus);
  // Filters from an address typed or kept from before may be wrong: they are shown in the form, not sent.
  const appliedErrors = checkLogFilters(applied);
  const valid = Object.keys(appliedErrors).length === 0;
  const records = useInfiniteQuery({
    queryKey: ['bus-log', bus, logQuery(applied, new Date(at)), at],
    queryFn: ({ pageParam }) => api<Schemas['BusLogPage']>(`${base}/log`, { query: logQuery(applied, new Date(at), pageParam) }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextToken || undefined,
    enabled: valid,
  });
  const rules = useQuery({
    queryKey: ['bus-log', bus, 'rules'],
    queryFn: async () => ((await api<Schemas['RuleList']>(`${base}/rules`, { query: { limit: 500 } })).rules ?? []).map((r) => r.name ?? '').filter((n) => n !== ''),
    staleTime: 30_000,
  });
  const rows = (records.data?.pages ?? []).flatMap((p) => p.records ?? []);
  const level = busQuery.data ? logSettingsOf(busQuery.data).level : undefined;
  const n = logFiltersSet(applied);

  const set = (patch: Partial<LogFilters>) => setForm((f) => ({ ...f, ...patch }));
  function apply(e?: FormEvent) {
    e?.preventDefault();
    const errs = checkLogFilters(form);
    setErrors(errs);
    if (Object.keys(errs).length > 0) return;
    setSearch(logFiltersToSearch(form));
    setAt(Date.now());
  }
  function clearFilters() {
    setForm(defaultLogFilters);
    setErrors({});
    setSearch(new URLSearchParams());
    setAt(Date.now());
  }
  const shownErrors = Object.keys(errors).length > 0 ? errors : appliedErrors;
  const typeChoices = [{ value: '', label: 'Any type' }, ...withValue([...RECORD_TYPES], form.type).map((t) => ({ value: t, label: t }))];

  return (
    <Stack maw={1400}>
      <Crumbs items={[['Buses', '/buses'], [bus, base], ['Log']]} />
      <Group justify="space-between">
        <Title order={1} size="h3">
          Log of {bus}
        </Title>
        <Button variant="default" onClick={() => setAt(Date.now())} loading={records.isFetching && !records.isFetchingNextPage && !records.isPending}>
          Refresh
        </Button>
      </Group>
      <Text size="sm">
        What happened to each event of the bus, as its log level records it: the router reading it, the rules it matched (and at TRACE those it did
        not, with why), every attempt of every target with its outcome, dead letters and redrives. Records are kept 24 hours by default, oldest first.
      </Text>
      <LogSettingsCard key={bus} bus={bus} query={busQuery} />
      <Title order={2} size="h4">
        Records
      </Title>
      <Paper withBorder p="sm" component="form" onSubmit={apply} aria-label="Filters" noValidate>
        <Stack gap="xs">
          <SimpleGrid cols={{ base: 1, xs: 2, md: 3, xl: 4 }} spacing="sm" verticalSpacing="xs">
            <Select label="Time" data={windowChoices} value={form.window} onChange={(v) => v && set({ window: v as Window })} allowDeselect={false} />
            {form.window === 'custom' && (
              <>
                <TextInput type="datetime-local" label="From" description="In your time zone" value={form.from} onChange={(e) => set({ from: e.currentTarget.value })} error={shownErrors.from} />
                <TextInput type="datetime-local" label="To" description="In your time zone" value={form.to} onChange={(e) => set({ to: e.currentTarget.value })} error={shownErrors.to} />
              </>
            )}
            <Select label="Record level" data={levelFilterChoices} value={form.level} onChange={(v) => set({ level: (v ?? '') as LevelFilter })} allowDeselect={false} />
            <Select label="Type" data={typeChoices} value={form.type} onChange={(v) => set({ type: v ?? '' })} allowDeselect={false} searchable />
            <Select
              label="Rule"
              placeholder="Any rule"
              data={withValue(rules.data ?? [], form.rule)}
              value={form.rule || null}
              onChange={(v) => set({ rule: v ?? '' })}
              searchable
              clearable
            />
            <TextInput label="Target" placeholder="Any target" value={form.target} onChange={(e) => set({ target: e.currentTarget.value })} />
            <TextInput label="Event source" placeholder="shop.web" value={form.eventSource} onChange={(e) => set({ eventSource: e.currentTarget.value })} />
            <TextInput label="Event ID" placeholder="The event's id" value={form.eventId} onChange={(e) => set({ eventId: e.currentTarget.value })} />
          </SimpleGrid>
          <Group justify="flex-end" gap="xs">
            <Button variant="default" onClick={clearFilters} disabled={search.size === 0}>
              Clear filters
            </Button>
            <Button type="submit">Apply filters</Button>
          </Group>
        </Stack>
      </Paper>
      {!valid ? null : records.isPending ? (
        <Center p="lg">
          <Loader size="sm" aria-label="Loading" />
        </Center>
      ) : !records.data ? (
        <ErrorAlert error={records.error} title="Could not load" />
      ) : rows.length === 0 && !records.hasNextPage ? (
        <Text c="dimmed" p="md" data-testid="empty">
          {emptyText(level, n)}
        </Text>
      ) : (
        <Stack gap="xs">
          {level === 'OFF' && <Text size="sm">The log level is OFF: these records were written before, and nothing new is recorded.</Text>}
          {rows.length === 0 ? (
            <Text size="sm" data-testid="empty-page">
              None found yet: each page reads at most {SCAN_PER_PAGE.toLocaleString('en')} records, and those read so far did not match. Load more to read on.
            </Text>
          ) : (
            <RecordTable bus={bus} rows={rows} />
          )}
          <Group justify="space-between">
            <Text size="sm" data-testid="bus-log-count">
              {rows.length === 1 ? '1 record' : `${rows.length} records`}
              {records.hasNextPage ? '; there are more' : ''}
            </Text>
            {records.hasNextPage && (
              <Button variant="default" size="xs" onClick={() => void records.fetchNextPage()} loading={records.isFetchingNextPage} data-testid="load-more">
                Load more
              </Button>
            )}
          </Group>
          {/* Pages read stay shown when reading the next one or again failed. */}
          <ErrorAlert error={records.error} title={records.isFetchNextPageError ? 'Could not load more' : 'Could not load'} />
        </Stack>
      )}
    </Stack>
  );
}

/** LogSettingsCard shows and changes what the bus's log records; a change is saved with Save. */
function LogSettingsCard({ bus, query }: { bus: string; query: ReturnType<typeof useBus> }) {
  const qc = useQueryClient();
  const saved = logSettingsOf(query.data);
  // The user's change, until saved or discarded; the bus's own settings otherwise.
  const [draft, setDraft] = useState<LogSettings>();
  const shown = draft ?? saved;
  const dirty = draft !== undefined && (draft.level !== saved.level || draft.includeDetail !== saved.includeDetail);
  const save = useMutation({
    mutationFn: (s: LogSettings) => api<Bus>(`/buses/${enc(bus)}`, { method: 'PATCH', body: logPatch(s) }),
    onSuccess: (b) => {
      qc.setQueryData(['buses', 'one', bus], b);
      void qc.invalidateQueries({ queryKey: ['buses'] });
      setDraft(undefined);
      toast(settingsToast(bus, logSettingsOf(b)));
    },
  });
  const change = (patch: Partial<LogSettings>) => {
    save.reset();
    setDraft({ ...shown, ...patch });
  };
  return (
    <Paper withBorder p="sm" component="section" aria-labelledby="log-settings-title" data-testid="bus-log-settings">
      <Stack gap="xs">
        <Title order={2} size="h4" id="log-settings-title">
          Log settings
        </Title>
        {query.isPending ? (
          <Loader size="sm" aria-label="Loading the log settings" />
        ) : query.isError ? (
          <ErrorAlert error={query.error} title="Could not load the bus" />
        ) : (
          <>
            <Text size="sm" fw={500} id="log-level-label">
              Log level
            </Text>
            <SegmentedControl
              aria-labelledby="log-level-label"
              aria-describedby="log-level-description"
              data={levelChoices.map((c) => c.value)}
              value={shown.level}
              onChange={(v) => change({ level: v as LogSettings['level'] })}
              maw={420}
              data-testid="bus-log-level"
            />
            <Text size="sm" id="log-level-description" data-testid="bus-log-level-description">
              {levelChoices.find((c) => c.value === shown.level)?.description}
            </Text>
            <Switch
              label="Include detail"
              description="Adds the event to EVENT_RECEIPT records and the start of the target's answer to failed attempts."
              checked={shown.includeDetail === 'FULL'}
              onChange={(e) => change({ includeDetail: e.currentTarget.checked ? 'FULL' : 'NONE' })}
            />
            <Text size="xs" c="dimmed">
              Saving updates the bus&apos;s router and targets, whose tasks restart once.
            </Text>
            <ErrorAlert error={save.error} title="Could not save the log settings" />
            <Group gap="xs">
              <Button onClick={() => save.mutate(shown)} disabled={!dirty} loading={save.isPending}>
                Save log settings
              </Button>
              {dirty && (
                <Button variant="default" onClick={() => (setDraft(undefined), save.reset())}>
                  Discard changes
                </Button>
              )}
            </Group>
          </>
        )}
      </Stack>
    </Paper>
  );
}

/** RecordTable lists the records, each opening to its JSON (message, answer snippet, trace ID and the rest). */
function RecordTable({ bus, rows }: { bus: string; rows: BusLogRecord[] }) {
  const now = useNow();
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) =>
    setOpen((s) => {
      const next = new Set(s);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return (
    <Table.ScrollContainer type="native" minWidth={1120} aria-label="Log records">
      <Table striped verticalSpacing={6} data-testid="bus-log-records">
        <Table.Thead>
          <Table.Tr>
            <Table.Th w={44}>
              <VisuallyHidden>Record JSON</VisuallyHidden>
            </Table.Th>
            <Table.Th>Time</Table.Th>
            <Table.Th>Level</Table.Th>
            <Table.Th>Type</Table.Th>
            <Table.Th>Event ID</Table.Th>
            <Table.Th>Rule</Table.Th>
            <Table.Th>Target</Table.Th>
            <Table.Th>Summary</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((r, i) => {
            const key = r.id ?? String(i);
            const isOpen = open.has(key);
            const detail = `bus-log-record-${key}`;
            return (
              <Fragment key={key}>
                <Table.Tr data-testid="bus-log-record" data-type={r.type} data-event-id={r.eventId ?? ''}>
                  <Table.Td>
                    <ActionIcon
                      variant="subtle"
                      color="gray"
                      size="sm"
                      onClick={() => toggle(key)}
                      aria-expanded={isOpen}
                      aria-controls={isOpen ? detail : undefined}
                      aria-label={`${isOpen ? 'Hide' : 'Show'} the JSON of record ${key}`}
                    >
                      {isOpen ? <IconChevronDown size={16} aria-hidden /> : <IconChevronRight size={16} aria-hidden />}
                    </ActionIcon>
                  </Table.Td>
                  <Table.Td>
                    <time dateTime={r.time} title={exactTime(r.time)} style={{ whiteSpace: 'nowrap' }}>
                      {logTime(r.time, now)}
                    </time>
                  </Table.Td>
                  <Table.Td>
                    <Badge size="sm" variant="light" color={levelColor(r.level)}>
                      {r.level}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" ff="monospace" style={{ overflowWrap: 'anywhere' }}>
                      {r.type}
                    </Text>
                  </Table.Td>
                  <Table.Td style={{ overflowWrap: 'anywhere' }}>
                    {r.eventId && r.eventSource ? (
                      <Anchor component={Link} to={eventTracePath(bus, r.eventId, r.eventSource, eventStoredAt(r))} size="sm" title={`What happened to event ${r.eventId} of ${r.eventSource}`}>
                        {r.eventId}
                      </Anchor>
                    ) : (
                      r.eventId
                    )}
                  </Table.Td>
                  <Table.Td style={{ overflowWrap: 'anywhere' }}>{r.rule}</Table.Td>
                  <Table.Td style={{ overflowWrap: 'anywhere' }}>{r.target}</Table.Td>
                  <Table.Td maw={420} style={{ overflowWrap: 'anywhere' }}>
                    <Text size="sm">{recordSummary(r)}</Text>
                  </Table.Td>
                </Table.Tr>
                {isOpen && (
                  <Table.Tr id={detail}>
                    <Table.Td colSpan={8}>
                      <Code block style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
                        {JSON.stringify(r, null, 2)}
                      </Code>
                    </Table.Td>
                  </Table.Tr>
                )}
              </Fragment>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
