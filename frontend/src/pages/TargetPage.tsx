import { Alert, Anchor, Badge, Button, Code, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router-dom';
import { api, enc, type Target } from '../api/client';
import { Crumbs, Fields } from '../components/Detail';
import { Counters, HealthBadge, HealthLine } from '../components/Health';
import { QueryState } from '../components/states';
import { RelativeTime } from '../components/Time';
import { fieldLabel } from '../format';
import { maskedConfig } from '../forms/resourceForms';

const stateColor = (s?: string) => (s === 'RUNNING' ? 'green' : s === 'FAILED' ? 'red' : s === 'PAUSED' ? 'yellow' : 'gray');

/** transformerOf is the target's input transformer as text, whichever form it has. */
function transformerOf(t: Target): string | undefined {
  if (t.inputTransformer) return JSON.stringify(t.inputTransformer, null, 2);
  if (t.transform) return JSON.stringify(t.transform, null, 2);
  if (t.input !== undefined) return `input: ${t.input}`;
  if (t.inputPath !== undefined) return `inputPath: ${t.inputPath}`;
  return undefined;
}

export function TargetPage() {
  const { bus = '', rule = '', target = '' } = useParams();
  const path = `/buses/${enc(bus)}/rules/${enc(rule)}/targets/${enc(target)}`;
  // The health, last failure and counters are refreshed every 5 seconds.
  const query = useQuery({ queryKey: ['targets', bus, rule, target], queryFn: () => api<Target>(path), refetchInterval: 5000 });
  return (
    <Stack>
      <Crumbs items={[['Buses', '/buses'], [bus, `/buses/${enc(bus)}`], [rule, `/buses/${enc(bus)}/rules/${enc(rule)}`], [target]]} />
      <Group justify="space-between">
        <Title order={1} size="h3">
          Target {target}{' '}
          {query.data && (
            <>
              <Badge variant="light">{query.data.type}</Badge> <HealthBadge health={query.data.status?.health} size="md" />{' '}
              <Badge color={stateColor(query.data.status?.state)} style={{ minWidth: 'max-content' }} title="The connector's state">
                {query.data.status?.state ?? 'no status'}
              </Badge>
            </>
          )}
        </Title>
        <Button size="xs" variant="light" component={Link} to={`/builder/${enc(bus)}/${enc(rule)}`}>
          Open the rule in the builder
        </Button>
      </Group>
      <QueryState query={query}>
        {(t) => (
          <>
            <Title order={2} size="h4">
              Health
            </Title>
            <Fields
              rows={[
                ['Health', <HealthBadge key="h" health={t.status?.health} />],
                ['Last failure', <HealthLine key="f" facts={t.status ?? {}} />],
                ['Since created', <Counters key="c" counters={t.status?.counters} />],
              ]}
            />
            {t.status?.lastError && t.status.lastError !== t.status.lastFailure?.message && (
              <Alert color="red" title="Last error">
                {t.status.lastError}
              </Alert>
            )}
            <Title order={2} size="h4">
              Tasks
            </Title>
            <Text size="sm">Each task's counters since it started on its worker.</Text>
            {(t.status?.tasks ?? []).length === 0 ? (
              <Alert color="gray">No task runs this target now.</Alert>
            ) : (
              <Table.ScrollContainer type="native" minWidth={760} aria-label="Tasks">
                <Table striped data-testid="target-tasks">
                  <Table.Thead>
                    <Table.Tr>
                      {['Task', 'State', 'Worker', 'Read', 'Delivered', 'Filtered', 'Retried', 'Failed', 'Dead-lettered', 'Dropped'].map((h) => (
                        <Table.Th key={h}>{h}</Table.Th>
                      ))}
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {(t.status?.tasks ?? []).map((k) => (
                      <Table.Tr key={k.id}>
                        <Table.Td>{k.id}</Table.Td>
                        <Table.Td>
                          <Badge color={stateColor(k.state)} style={{ minWidth: 'max-content' }}>
                            {k.state}
                          </Badge>
                        </Table.Td>
                        <Table.Td>{k.workerId}</Table.Td>
                        {(['read', 'delivered', 'filtered', 'retried', 'failed', 'deadLettered', 'dropped'] as const).map((c) => (
                          <Table.Td key={c} data-testid={`${c}-${k.id}`}>
                            {k.counters?.[c] ?? '–'}
                          </Table.Td>
                        ))}
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Table.ScrollContainer>
            )}
            <Title order={2} size="h4">
              Configuration
            </Title>
            <Fields
              rows={[
                ...maskedConfig(t.config as Record<string, unknown> | undefined).map(([k, v]): [string, ReactNode] => [fieldLabel(k), <Code key={k}>{v}</Code>]),
                [
                  'API destination',
                  t.config?.apiDestination ? (
                    <Anchor component={Link} to={`/api-destinations/${enc(t.config.apiDestination)}`}>
                      open {t.config.apiDestination}
                    </Anchor>
                  ) : undefined,
                ],
                ['Input transformer', transformerOf(t) ? <Code block>{transformerOf(t)}</Code> : undefined],
                ['Attributes', t.attributes ? <Code block>{JSON.stringify(t.attributes, null, 2)}</Code> : undefined],
                ['Retry policy', t.retryPolicy ? <Code>{JSON.stringify(t.retryPolicy)}</Code> : undefined],
                ['Dead letters', t.deadLetterConfig ? <Code>{JSON.stringify(t.deadLetterConfig)}</Code> : 'The account\'s dead-letter stream'],
                ['Created', t.createdAt && <RelativeTime value={t.createdAt} />],
                ['Updated', t.updatedAt && <RelativeTime value={t.updatedAt} />],
              ]}
            />
          </>
        )}
      </QueryState>
    </Stack>
  );
}
