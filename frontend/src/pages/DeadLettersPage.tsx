import { Alert, Anchor, Button, Checkbox, Code, Group, Paper, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { errorText } from '../api/problem';
import { ConfirmButton } from '../components/Detail';
import { isGone, RedriveResults, useRedrive } from '../components/Redrive';
import { QueryState } from '../components/states';
import { notify } from '../components/toast';
import { RelativeTime } from '../components/Time';
import { exactTime } from '../format';
import { targetPath } from './DeadLetterPage';
import {
  checkFilters,
  countText,
  defaultFilters,
  discardSummary,
  discardToast,
  entryText,
  errorClassChoices,
  eventIdOf,
  filterOf,
  filtersFromSearch,
  filtersSet,
  filtersToSearch,
  filterWords,
  listQuery,
  MAX_FOLLOWED,
  normalized,
  REDRIVE_WATCH_MS,
  redriveToast,
  windowChoices,
  type DeadLetterFilters,
  type ErrorClass,
  type FilterErrors,
  type Window,
} from './deadLetters';

const PAGE_SIZE = 100;

/** withValue adds value to a select's choices when they lack it (a name from the address that no longer exists). */
const withValue = (names: string[], value: string) => (value && !names.includes(value) ? [value, ...names] : names);

/** useNames lists names for a filter's select (the first 500): buses, a bus's rules, a rule's targets. */
function useNames(key: unknown[], path: string | undefined, pick: (d: Record<string, unknown>) => { name?: string }[] | undefined) {
  const q = useQuery({
    queryKey: ['dead-letter-filter', ...key],
    enabled: path !== undefined,
    queryFn: async () => (pick(await api<Record<string, unknown>>(path!, { query: { limit: 500 } })) ?? []).map((x) => x.name ?? '').filter((n) => n !== ''),
    staleTime: 30_000,
  });
  return q.data ?? [];
}

/**
 * DeadLettersPage (/dead-letters) lists the account's dead letters, oldest first, with filters (bus, rule, target,
 * time, event ID, reason, error class) kept in the page's address; selected ones are redriven or discarded in bulk
 * (after a confirmation), or every one matching the filters is redriven. A redrive says what became of each event:
 * delivered, or dead-lettered again with a link to the new dead letter (useRedrive).
 */
export function DeadLettersPage() {
  const qc = useQueryClient();
  const [search, setSearch] = useSearchParams();
  const applied = filtersFromSearch(search);
  const [form, setForm] = useState<DeadLetterFilters>(applied);
  const [errors, setErrors] = useState<FilterErrors>({});
  // The time a window such as "last hour" ends at: taken when the filters are applied or the list refreshed.
  const [at, setAt] = useState(() => Date.now());
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const searchText = search.toString();
  useEffect(() => {
    setForm(filtersFromSearch(new URLSearchParams(searchText)));
    setTokens([undefined]);
    setSelected(new Set());
  }, [searchText]);
  const filter = filterOf(applied, new Date(at));
  const token = tokens[tokens.length - 1];
  const list = useQuery({
    queryKey: ['dead-letters', 'list', filter, token],
    queryFn: () => api<Schemas['DeadLetterList']>('/dead-letters', { query: listQuery(filter, token, PAGE_SIZE) }),
    placeholderData: keepPreviousData,
  });
  const rows = list.data?.deadLetters ?? [];
  const { watch, redrive, clear: clearWatch } = useRedrive();
  const [discarded, setDiscarded] = useState<Schemas['DiscardResult'] | undefined>();

  const buses = useNames(['buses'], '/buses', (d) => d.buses as { name?: string }[]);
  const rules = useNames(['rules', form.bus], form.bus ? `/buses/${enc(form.bus)}/rules` : undefined, (d) => d.rules as { name?: string }[]);
  const targets = useNames(
    ['targets', form.bus, form.rule],
    form.bus && form.rule ? `/buses/${enc(form.bus)}/rules/${enc(form.rule)}/targets` : undefined,
    (d) => d.targets as { name?: string }[],
  );

  const set = (patch: Partial<DeadLetterFilters>) => setForm((f) => normalized({ ...f, ...patch }));
  function apply(e?: FormEvent) {
    e?.preventDefault();
    const errs = checkFilters(form);
    setErrors(errs);
    if (Object.keys(errs).length > 0) return;
    setSearch(filtersToSearch(form));
    setTokens([undefined]);
    setAt(Date.now());
  }
  function clearFilters() {
    setForm(defaultFilters);
    setErrors({});
    setSearch(new URLSearchParams());
    setTokens([undefined]);
    setAt(Date.now());
  }
  function refresh() {
    setAt(Date.now());
    void qc.invalidateQueries({ queryKey: ['dead-letters'] });
  }
  const n = filtersSet(applied);
  const chosen = rows.filter((d) => d.id && selected.has(d.id));
  const allOnPage = rows.length > 0 && chosen.length === rows.length;
  const toggle = (id: string, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const ids = chosen.map((d) => d.id!);
  const gone = (verb: string) => (err: unknown) => {
    if (!isGone(err)) throw err;
    void qc.invalidateQueries({ queryKey: ['dead-letters'] });
    throw new Error(`${errorText(err).replace(/\.$/, '')}: it was redriven or discarded meanwhile, so none was ${verb}. The list is read again; select again.`);
  };

  return (
    <Stack maw={1400}>
      <Group justify="space-between">
        <Title order={1} size="h3">
          Dead letters
        </Title>
        <Button variant="default" onClick={refresh} loading={list.isFetching && !list.isPending}>
          Refresh
        </Button>
      </Group>
      <Text size="sm">
        The events the account&apos;s targets gave up (retries exhausted, a permanent error, a transform that failed), oldest first. Redrive sends an
        event back to the target that gave it up, and only to it; discard drops it for good.
      </Text>
      <Paper withBorder p="sm" component="form" onSubmit={apply} aria-label="Filters" noValidate>
        <Stack gap="xs">
          <SimpleGrid cols={{ base: 1, xs: 2, md: 3, xl: 4 }} spacing="sm" verticalSpacing="xs">
            <Select label="Bus" placeholder="Any bus" data={withValue(buses, form.bus)} value={form.bus || null} onChange={(v) => set(v === form.bus ? {} : { bus: v ?? '', rule: '', target: '' })} searchable clearable />
            <Select
              label="Rule"
              placeholder={form.bus ? 'Any rule' : 'Choose a bus first'}
              data={withValue(rules, form.rule)}
              value={form.rule || null}
              onChange={(v) => set(v === form.rule ? {} : { rule: v ?? '', target: '' })}
              disabled={!form.bus}
              searchable
              clearable
            />
            <Select
              label="Target"
              placeholder={form.rule ? 'Any target' : 'Choose a rule first'}
              data={withValue(targets, form.target)}
              value={form.target || null}
              onChange={(v) => set({ target: v ?? '' })}
              disabled={!form.rule}
              searchable
              clearable
            />
            <Select label="Time" data={windowChoices} value={form.window} onChange={(v) => v && set({ window: v as Window })} allowDeselect={false} />
            {form.window === 'custom' && (
              <>
                <TextInput type="datetime-local" label="From" description="In your time zone" value={form.from} onChange={(e) => set({ from: e.currentTarget.value })} error={errors.from} />
                <TextInput type="datetime-local" label="To" description="In your time zone" value={form.to} onChange={(e) => set({ to: e.currentTarget.value })} error={errors.to} />
              </>
            )}
            <TextInput label="Event ID" placeholder="The original event's id" value={form.eventId} onChange={(e) => set({ eventId: e.currentTarget.value })} />
            <TextInput label="Reason contains" placeholder="503, refused, …" value={form.reason} onChange={(e) => set({ reason: e.currentTarget.value })} error={errors.reason} />
            <Select label="Error class" data={errorClassChoices} value={form.errorClass} onChange={(v) => set({ errorClass: (v ?? '') as ErrorClass })} allowDeselect={false} />
          </SimpleGrid>
          <Group justify="flex-end" gap="xs">
            <Button variant="default" onClick={clearFilters} disabled={n === 0}>
              Clear filters
            </Button>
            <Button type="submit">Apply filters</Button>
          </Group>
        </Stack>
      </Paper>
      {watch && <RedriveResults watch={watch} onClose={clearWatch} />}
      {discarded && (
        <Alert color={(discarded.failedCount ?? 0) > 0 ? 'red' : 'green'} title="Discard" withCloseButton closeButtonLabel="Dismiss the discard results" onClose={() => setDiscarded(undefined)} role="status" data-testid="discard-results">
          <Text size="sm">{discardSummary(discarded)}</Text>
          {(discarded.entries ?? [])
            .filter((e) => e.errorCode || e.errorMessage)
            .map((e) => (
              <Text size="sm" key={e.id}>
                {entryText(e, 'discarded')}
              </Text>
            ))}
        </Alert>
      )}
      <Group justify="space-between" gap="xs" data-testid="bulk-actions">
        <Group gap="xs">
          <Text size="sm" data-testid="selected-count">
            {chosen.length === 0 ? 'None selected' : `${countText(chosen.length)} selected`}
          </Text>
          <ConfirmButton
            label={`Redrive selected (${chosen.length})`}
            title="Redrive?"
            disabled={chosen.length === 0}
            question={`Redrive ${countText(chosen.length)}? Each original event goes back to the target that gave it up, whose retry policy applies afresh. The page then looks for ${REDRIVE_WATCH_MS / 1000} s whether each fails again.`}
            run={() => redrive({ ids }, chosen).catch(gone('redriven'))}
            onDone={(r) => {
              notify(redriveToast(r));
              setDiscarded(undefined);
              setSelected(new Set());
            }}
          />
          <ConfirmButton
            label={`Discard selected (${chosen.length})`}
            title="Discard?"
            color="red"
            disabled={chosen.length === 0}
            question={`Discard ${countText(chosen.length)}? Their events are lost. This cannot be undone.`}
            run={() => api<Schemas['DiscardResult']>('/dead-letters', { method: 'DELETE', body: { ids } }).catch(gone('discarded'))}
            onDone={(r) => {
              notify(discardToast(r));
              clearWatch();
              setDiscarded(r);
              setSelected(new Set());
              void qc.invalidateQueries({ queryKey: ['dead-letters'] });
            }}
          />
        </Group>
        <ConfirmButton
          label="Redrive all matching the filter"
          title="Redrive all matching?"
          disabled={rows.length === 0}
          question={`Redrive ${filterWords(filter, (t) => exactTime(t))}: every one stored now, on every page, not only those shown. Each goes back to the target that gave it up. The page follows the events it shows (at most ${MAX_FOLLOWED}).`}
          run={() => redrive({ filter }, rows)}
          onDone={(r) => {
            notify(redriveToast(r));
            setDiscarded(undefined);
            setSelected(new Set());
          }}
        />
      </Group>
      <QueryState
        query={list}
        isEmpty={(d) => (d.deadLetters ?? []).length === 0 && !d.nextToken && tokens.length === 1}
        empty={
          n > 0
            ? 'No dead letters match these filters.'
            : 'No dead letters. An event lands here when a target refuses it or every retry fails; from here it can be redriven or discarded.'
        }
      >
        {(d) => (
          <Stack gap="xs">
            {(d.deadLetters ?? []).length === 0 ? (
              <Text size="sm" data-testid="empty-page">
                None on this page: a page reads at most 10,000 dead letters, and those it read did not match. The next page reads on.
              </Text>
            ) : (
              <Table.ScrollContainer type="native" minWidth={1000} aria-label="Dead letters">
                <Table striped verticalSpacing="xs" data-testid="dead-letters">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th w={40}>
                        <Checkbox
                          aria-label="Select every dead letter on this page"
                          checked={allOnPage}
                          indeterminate={chosen.length > 0 && !allOnPage}
                          onChange={(e) => setSelected(e.currentTarget.checked ? new Set(rows.map((r) => r.id ?? '')) : new Set())}
                        />
                      </Table.Th>
                      <Table.Th>ID</Table.Th>
                      <Table.Th>Given up</Table.Th>
                      <Table.Th>Target</Table.Th>
                      <Table.Th>Class</Table.Th>
                      <Table.Th>Reason</Table.Th>
                      <Table.Th>Attempts</Table.Th>
                      <Table.Th>Event ID</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {(d.deadLetters ?? []).map((l) => (
                      <Table.Tr key={l.id} data-testid="dead-letter" data-id={l.id} data-event-id={eventIdOf(l) ?? ''}>
                        <Table.Td>
                          <Checkbox aria-label={`Select dead letter ${l.id}`} checked={selected.has(l.id ?? '')} onChange={(e) => toggle(l.id ?? '', e.currentTarget.checked)} />
                        </Table.Td>
                        <Table.Td>
                          <Anchor component={Link} to={`/dead-letters/${enc(String(l.id))}`} state={{ deadLetter: l }} size="sm">
                            {l.id}
                          </Anchor>
                        </Table.Td>
                        <Table.Td>
                          <RelativeTime value={l.time} />
                        </Table.Td>
                        <Table.Td>
                          {targetPath(l) ? (
                            <Anchor component={Link} to={targetPath(l)!} size="sm">
                              {[l.bus, l.rule, l.target].join(' / ')}
                            </Anchor>
                          ) : (
                            <Code>{l.connector}</Code>
                          )}
                        </Table.Td>
                        <Table.Td>
                          <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
                            {l.errorClass}
                          </Text>
                        </Table.Td>
                        <Table.Td maw={380}>
                          <Code style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{l.reason}</Code>
                        </Table.Td>
                        <Table.Td>{l.attempts}</Table.Td>
                        <Table.Td style={{ overflowWrap: 'anywhere' }}>{eventIdOf(l)}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
            )}
            <Group justify="space-between">
              <Text size="sm" data-testid="dead-letters-page">
                Page {tokens.length}
                {(d.deadLetters ?? []).length > 0 ? `, ${countText((d.deadLetters ?? []).length)}` : ''}
                {n > 0 ? `; ${n} filter${n === 1 ? '' : 's'} applied` : ''}
              </Text>
              <Group gap="xs">
                <Button variant="default" size="xs" disabled={tokens.length === 1} onClick={() => (setTokens((t) => t.slice(0, -1)), setSelected(new Set()))}>
                  Previous page
                </Button>
                <Button variant="default" size="xs" disabled={!d.nextToken} onClick={() => d.nextToken && (setTokens((t) => [...t, d.nextToken]), setSelected(new Set()))}>
                  Next page
                </Button>
              </Group>
            </Group>
          </Stack>
        )}
      </QueryState>
    </Stack>
  );
}
