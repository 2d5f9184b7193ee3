import { Badge, Button, Checkbox, Code, Group, Paper, Select, SimpleGrid, Stack, Table, Text, TextInput, Title, Tooltip } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router-dom';
import { listAuditLog, type AuditEntry } from '../api/access';
import { AccessState, useCaller } from '../components/Access';
import { RelativeTime } from '../components/Time';
import {
  actorText,
  auditQuery,
  checkFilters,
  filtersFromSearch,
  filtersSet,
  filtersToSearch,
  outcomeChoices,
  outcomeText,
  windowChoices,
  type AuditFilters,
  type FilterErrors,
  type Outcome,
  type Window,
} from './auditLog';

/**
 * AuditLogPage (/access/audit-log) is the account's audit log, newest first: who did what to which resource, how it
 * ended, when and from where. Its filters (time window, actor, operation, resource, outcome, and every account for
 * an instance administrator) live in the page's address; pages follow the API's nextToken. The account's
 * administrators only (access.manage); other roles are told so.
 */
export function AuditLogPage() {
  const caller = useCaller();
  const [search, setSearch] = useSearchParams();
  const applied = filtersFromSearch(search);
  // The filters' form, applied to the address by Apply; the time a window such as "last hour" ends at is taken
  // when the filters are applied or the page is refreshed, so that the query stays the same in between.
  const [form, setForm] = useState<AuditFilters>(applied);
  const [errors, setErrors] = useState<FilterErrors>({});
  const [at, setAt] = useState(() => Date.now());
  // The tokens of the pages seen: [undefined] is the first page; the last is the page shown.
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const token = tokens[tokens.length - 1];
  // The address changed by other means (the browser's back and forward): the form and the pages follow it.
  const searchText = search.toString();
  useEffect(() => {
    setForm(filtersFromSearch(new URLSearchParams(searchText)));
    setTokens([undefined]);
  }, [searchText]);
  const query = auditQuery(applied, new Date(at), token);
  const list = useQuery({
    queryKey: ['audit-log', caller.account, query],
    queryFn: () => listAuditLog(query),
    placeholderData: keepPreviousData,
  });

  function apply(e?: FormEvent) {
    e?.preventDefault();
    const errs = checkFilters(form);
    setErrors(errs);
    if (Object.keys(errs).length > 0) return;
    setSearch(filtersToSearch(form));
    setTokens([undefined]);
    setAt(Date.now());
  }
  function clear() {
    setForm(filtersFromSearch(new URLSearchParams()));
    setErrors({});
    setSearch(new URLSearchParams());
    setTokens([undefined]);
    setAt(Date.now());
  }
  function refresh() {
    setTokens([undefined]);
    setAt(Date.now());
    void list.refetch();
  }
  const set = (patch: Partial<AuditFilters>) => setForm((f) => ({ ...f, ...patch }));
  const n = filtersSet(applied);
  const showAccount = applied.allAccounts;

  return (
    <Stack maw={1400}>
      <Group justify="space-between">
        <Title order={1} size="h3">
          Audit log
        </Title>
        <Button variant="default" onClick={refresh} loading={list.isFetching && !list.isPending}>
          Refresh
        </Button>
      </Group>
      <Text size="sm">
        Every control operation in account <b>{caller.account}</b>, newest first: who called, what, on which resource, how it
        ended, when and from where. Reads are recorded too; putting events is not (metrics count it). No entry holds a
        credential.
      </Text>
      <Paper withBorder p="sm" component="form" onSubmit={apply} aria-label="Filters" noValidate>
        <Stack gap="xs">
          <SimpleGrid cols={{ base: 1, xs: 2, md: 3, xl: 4 }} spacing="sm" verticalSpacing="xs">
            <Select label="Time" data={windowChoices} value={form.window} onChange={(v) => v && set({ window: v as Window })} allowDeselect={false} />
            {form.window === 'custom' && (
              <>
                <TextInput type="datetime-local" label="From" description="In your time zone" value={form.from} onChange={(e) => set({ from: e.currentTarget.value })} error={errors.from} />
                <TextInput type="datetime-local" label="To" description="In your time zone" value={form.to} onChange={(e) => set({ to: e.currentTarget.value })} error={errors.to} />
              </>
            )}
            <TextInput label="Actor" placeholder="alice, or a key’s id" value={form.actor} onChange={(e) => set({ actor: e.currentTarget.value })} />
            <TextInput
              label="Operation"
              placeholder="rules.create, or rules.*"
              value={form.operation}
              onChange={(e) => set({ operation: e.currentTarget.value })}
              error={errors.operation}
            />
            <TextInput
              label="Resource"
              placeholder="buses/orders, or buses/orders*"
              value={form.resource}
              onChange={(e) => set({ resource: e.currentTarget.value })}
              error={errors.resource}
            />
            <Select label="Outcome" data={outcomeChoices} value={form.outcome} onChange={(v) => set({ outcome: (v ?? '') as Outcome })} allowDeselect={false} />
          </SimpleGrid>
          <Group justify="space-between" gap="xs">
            {caller.instanceAdmin ? (
              <Checkbox
                label="All accounts, and the instance’s own entries"
                checked={form.allAccounts}
                onChange={(e) => set({ allAccounts: e.currentTarget.checked })}
              />
            ) : (
              <span />
            )}
            <Group gap="xs">
              <Button variant="default" onClick={clear} disabled={n === 0 && !applied.allAccounts}>
                Clear filters
              </Button>
              <Button type="submit">Apply filters</Button>
            </Group>
          </Group>
        </Stack>
      </Paper>
      <AccessState
        query={list}
        what="the audit log"
        caller={caller}
        isEmpty={(d) => (d.entries ?? []).length === 0 && tokens.length === 1}
        empty={n > 0 ? 'No entries match these filters.' : 'No entries yet. Every control operation in this account will be recorded here.'}
      >
        {(d) => (
          <Stack gap="xs">
            <Table.ScrollContainer type="native" minWidth={showAccount ? 1080 : 980} pos="relative" aria-label="Audit log entries">
              <Table data-testid="audit-log" verticalSpacing={6} striped>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Time</Table.Th>
                    {showAccount && <Table.Th>Account</Table.Th>}
                    <Table.Th>Actor</Table.Th>
                    <Table.Th>Operation</Table.Th>
                    <Table.Th>Resource</Table.Th>
                    <Table.Th>Outcome</Table.Th>
                    <Table.Th>Client address</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {(d.entries ?? []).map((e) => (
                    <EntryRow key={e.id} e={e} showAccount={showAccount} />
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
            <Group justify="space-between">
              <Text size="sm" data-testid="audit-page">
                Page {tokens.length}
                {(d.entries ?? []).length > 0 ? `, ${(d.entries ?? []).length} entries` : ', no more entries'}
              </Text>
              <Group gap="xs">
                <Button variant="default" size="xs" disabled={tokens.length === 1} onClick={() => setTokens((t) => t.slice(0, -1))}>
                  Newer
                </Button>
                <Button variant="default" size="xs" disabled={!d.nextToken} onClick={() => d.nextToken && setTokens((t) => [...t, d.nextToken])}>
                  Older
                </Button>
              </Group>
            </Group>
          </Stack>
        )}
      </AccessState>
    </Stack>
  );
}

function EntryRow({ e, showAccount }: { e: AuditEntry; showAccount: boolean }) {
  const failed = e.outcome === 'failure';
  return (
    <Table.Tr data-testid="audit-entry" data-operation={e.operation}>
      <Table.Td>
        <Text size="sm">
          <RelativeTime value={e.time} />
        </Text>
      </Table.Td>
      {showAccount && (
        <Table.Td>
          <Text size="sm">{e.account || 'Instance'}</Text>
        </Table.Td>
      )}
      <Table.Td>
        <Tooltip label={e.actor?.id ? `id ${e.actor.id}` : 'no id'} disabled={!e.actor?.id}>
          <Text size="sm">{actorText(e.actor)}</Text>
        </Tooltip>
      </Table.Td>
      <Table.Td>
        <Code>{e.operation}</Code>
      </Table.Td>
      <Table.Td>
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          {e.resource}
        </Text>
      </Table.Td>
      <Table.Td>
        <Badge size="sm" variant="light" color={failed ? 'red' : 'green'} title={e.source && e.source !== 'control-plane' ? `from ${e.source}` : undefined} style={{ textTransform: 'none' }}>
          {outcomeText(e)}
        </Badge>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{e.clientAddress || '—'}</Text>
      </Table.Td>
    </Table.Tr>
  );
}
