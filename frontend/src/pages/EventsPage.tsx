import { Anchor, Button, Center, Group, JsonInput, Loader, Paper, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router-dom';
import { api, enc, type Bus, type Schemas } from '../api/client';
import { Crumbs } from '../components/Detail';
import { ErrorAlert } from '../components/states';
import { RelativeTime } from '../components/Time';
import { retentionText } from '../format';
import {
  attributesOf,
  checkFilters,
  defaultFilters,
  emptyText,
  filtersFromSearch,
  filtersSet,
  filtersToSearch,
  hasErrors,
  SCAN_PER_PAGE,
  searchQuery,
  storedKey,
  tracePath,
  windowChoices,
  type EventFilters,
  type FilterErrors,
  type Window,
} from './events';
import { PatternProblems } from '../components/PatternProblems';


/** useBus reads a bus (its retention, its log level), shared by the events pages. */
export function useBus(bus: string) {
  return useQuery({ queryKey: ['buses', 'one', bus], queryFn: () => api<Bus>(`/buses/${enc(bus)}`), staleTime: 30_000 });
}

/**
 * EventsPage (/buses/:bus/events) searches the events a bus stored, oldest first, by time window, type, source,
 * subject, ID and event pattern, kept in the page's address; "Load more" reads the next page (each page scans at
 * most 10,000 events). A row opens the event's trace (EventTracePage).
 */
export function EventsPage() {
  const bus = useParams().bus ?? '';
  const navigate = useNavigate();
  const [search, setSearch] = useSearchParams();
  const applied = filtersFromSearch(search);
  const [form, setForm] = useState<EventFilters>(applied);
  const [errors, setErrors] = useState<FilterErrors>({});
  // The time a window such as "last hour" ends at: taken when the filters are applied or the search refreshed.
  const [at, setAt] = useState(() => Date.now());
  const searchText = search.toString();
  useEffect(() => {
    setForm(filtersFromSearch(new URLSearchParams(searchText)));
    setErrors({});
  }, [searchText]);
  const busQuery = useBus(bus);
  const base = `/buses/${enc(bus)}`;
  // Filters from an address typed or kept from before may be wrong: they are shown in the form, not sent.
  const appliedErrors = checkFilters(applied);
  // The time is in the key, so that a refresh reads again a window that does not move ("any time").
  const events = useInfiniteQuery({
    queryKey: ['events', bus, searchQuery(applied, new Date(at)), at],
    queryFn: ({ pageParam }) => api<Schemas['StoredEventList']>(`${base}/events`, { query: searchQuery(applied, new Date(at), pageParam) }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextToken || undefined,
    enabled: !hasErrors(appliedErrors),
  });
  const rows = (events.data?.pages ?? []).flatMap((p) => p.events ?? []);
  const pagesRead = events.data?.pages.length ?? 0;

  const set = (patch: Partial<EventFilters>) => setForm((f) => ({ ...f, ...patch }));
  // The pattern is checked at each key stroke, the times when the filters are applied.
  const patternProblems = form.pattern.trim() ? (checkFilters({ ...defaultFilters, pattern: form.pattern }).pattern ?? []) : [];
  function apply(e?: FormEvent) {
    e?.preventDefault();
    const errs = checkFilters(form);
    setErrors(errs);
    if (hasErrors(errs)) return;
    setSearch(filtersToSearch(form));
    setAt(Date.now());
  }
  function clearFilters() {
    setForm(defaultFilters);
    setErrors({});
    setSearch(new URLSearchParams());
    setAt(Date.now());
  }
  const shownErrors = hasErrors(errors) ? errors : appliedErrors;
  const patternError = patternProblems.length > 0 ? <PatternProblems problems={patternProblems} /> : undefined;

  return (
    <Stack maw={1400}>
      <Crumbs items={[['Buses', '/buses'], [bus, base], ['Events']]} />
      <Group justify="space-between">
        <Title order={1} size="h3">
          Events of {bus}
        </Title>
        <Button variant="default" onClick={() => setAt(Date.now())} loading={events.isFetching && !events.isFetchingNextPage}>
          Refresh
        </Button>
      </Group>
      <Text size="sm">
        The events the bus stored (PutEvents, webhooks, sources), oldest first, within its retention
        {busQuery.data?.retention ? ` (${retentionText(busQuery.data.retention)})` : ''}. Open one to see which rules matched it, what each target answered,
        and to redrive or replay it.
      </Text>
      <Paper withBorder p="sm" component="form" onSubmit={apply} aria-label="Search filters" noValidate>
        <Stack gap="xs">
          <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} spacing="sm" verticalSpacing="xs">
            <Select label="Time window" data={windowChoices} value={form.window} onChange={(v) => v && set({ window: v as Window })} allowDeselect={false} />
            {form.window === 'custom' && (
              <>
                <TextInput type="datetime-local" label="From" description="In your time zone" value={form.from} onChange={(e) => set({ from: e.currentTarget.value })} error={shownErrors.from} />
                <TextInput type="datetime-local" label="To" description="In your time zone" value={form.to} onChange={(e) => set({ to: e.currentTarget.value })} error={shownErrors.to} />
              </>
            )}
            <TextInput label="Type" placeholder="order.created" value={form.type} onChange={(e) => set({ type: e.currentTarget.value })} />
            <TextInput label="Source" placeholder="shop.web" value={form.source} onChange={(e) => set({ source: e.currentTarget.value })} />
            <TextInput label="Subject" value={form.subject} onChange={(e) => set({ subject: e.currentTarget.value })} />
            <TextInput label="Event ID" value={form.id} onChange={(e) => set({ id: e.currentTarget.value })} />
          </SimpleGrid>
          <JsonInput
            label="Event pattern"
            description={'Optional, as a rule\'s: {"data": {"amount": [{"numeric": [">", 100]}]}}'}
            autosize
            minRows={2}
            maxRows={12}
            value={form.pattern}
            onChange={(v) => set({ pattern: v })}
            error={patternError}
            validationError={patternError}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
          <Group justify="flex-end" gap="xs">
            <Button variant="default" onClick={clearFilters}>
              Clear filters
            </Button>
            <Button type="submit" disabled={patternProblems.length > 0}>
              Search
            </Button>
          </Group>
        </Stack>
      </Paper>
      <ErrorAlert error={busQuery.error} title="Could not read the bus" />
      {hasErrors(appliedErrors) ? (
        <Text size="sm" c="red" role="alert">
          The filters in the address are not valid: correct them above and search again.
        </Text>
      ) : events.isPending ? (
        <Center p="lg">
          <Loader size="sm" aria-label="Loading" />
        </Center>
      ) : !events.data ? (
        <ErrorAlert error={events.error} title="Could not search the events" />
      ) : rows.length === 0 && !events.hasNextPage ? (
        <Text c="dimmed" p="md" data-testid="empty">
          {emptyText(applied, busQuery.data?.retention ? retentionText(busQuery.data.retention) : '')}
        </Text>
      ) : (
        <Stack gap="xs">
          {rows.length === 0 ? (
            <Text size="sm" data-testid="empty-page">
              None found yet: each page reads at most {SCAN_PER_PAGE.toLocaleString('en')} events, and those read so far did not match. Load more to read on.
            </Text>
          ) : (
            <Table.ScrollContainer type="native" minWidth={900} aria-label="Events">
              <Table striped highlightOnHover verticalSpacing="xs" data-testid="events">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Stored</Table.Th>
                    <Table.Th>Type</Table.Th>
                    <Table.Th>Source</Table.Th>
                    <Table.Th>ID</Table.Th>
                    <Table.Th>Subject</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {rows.map((s) => {
                    const a = attributesOf(s.event);
                    const to = tracePath(bus, s);
                    return (
                      // The ID's link is the way in for the keyboard and screen readers; a click anywhere on the row
                      // follows it too.
                      <Table.Tr key={storedKey(s)} data-testid="event-row" data-id={a.id ?? ''} onClick={() => to && navigate(to)} style={{ cursor: to ? 'pointer' : undefined }}>
                        <Table.Td>
                          <RelativeTime value={s.storedAt} />
                        </Table.Td>
                        <Table.Td style={{ overflowWrap: 'anywhere' }}>{a.type}</Table.Td>
                        <Table.Td style={{ overflowWrap: 'anywhere' }}>{a.source}</Table.Td>
                        <Table.Td style={{ overflowWrap: 'anywhere' }}>
                          {to ? (
                            <Anchor component={Link} to={to} size="sm" onClick={(e) => e.stopPropagation()}>
                              {a.id}
                            </Anchor>
                          ) : (
                            a.id
                          )}
                        </Table.Td>
                        <Table.Td style={{ overflowWrap: 'anywhere' }}>{a.subject}</Table.Td>
                      </Table.Tr>
                    );
                  })}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
          <Group justify="space-between">
            <Text size="sm" data-testid="events-count">
              {rows.length} event{rows.length === 1 ? '' : 's'} shown, {pagesRead} page{pagesRead === 1 ? '' : 's'} read
              {filtersSet(applied) > 0 ? `; ${filtersSet(applied)} filter${filtersSet(applied) === 1 ? '' : 's'} applied` : ''}
            </Text>
            {events.hasNextPage && (
              <Button variant="default" size="xs" onClick={() => void events.fetchNextPage()} loading={events.isFetchingNextPage} data-testid="load-more">
                Load more
              </Button>
            )}
          </Group>
          <ErrorAlert error={events.isFetchNextPageError ? events.error : undefined} title="Could not read the next page" />
        </Stack>
      )}
    </Stack>
  );
}
