import { Anchor, Badge, Button, Code, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { api, enc, type Rule, type Schemas } from '../api/client';
import { Crumbs, Fields } from '../components/Detail';
import { Counters, HealthBadge, HealthLine } from '../components/Health';
import { QueryState } from '../components/states';

export function RulePage() {
  const { bus = '', rule = '' } = useParams();
  const base = `/buses/${enc(bus)}/rules/${enc(rule)}`;
  const query = useQuery({ queryKey: ['rules', bus, 'one', rule], queryFn: () => api<Rule>(base) });
  // The targets' health, last failure and counters are read again every 5 seconds.
  const targets = useQuery({ queryKey: ['targets', bus, rule], queryFn: () => api<Schemas['TargetList']>(`${base}/targets`), refetchInterval: 5000 });
  return (
    <Stack>
      <Crumbs items={[['Buses', '/buses'], [bus, `/buses/${enc(bus)}`], [rule]]} />
      <Group justify="space-between">
        <Title order={1} size="h3">
          Rule {rule} {query.data?.state && <Badge color={query.data.state === 'DISABLED' ? 'gray' : 'green'}>{query.data.state}</Badge>}
        </Title>
        <Button size="xs" variant="light" component={Link} to={`/builder/${enc(bus)}/${enc(rule)}`}>
          Open in builder
        </Button>
      </Group>
      <QueryState query={query}>
        {(r) => (
          <>
            <Fields
              rows={[
                ['Description', r.description],
                ['Event pattern', <Code block key="p">{JSON.stringify(r.eventPattern, null, 2)}</Code>],
              ]}
            />
          </>
        )}
      </QueryState>
      <Title order={2} size="h4">
        Targets
      </Title>
      <QueryState query={targets} isEmpty={(d) => (d.targets ?? []).length === 0} empty="This rule has no targets: the events it matches go nowhere. Add a target in the builder.">
        {(d) => (
          <Table.ScrollContainer type="native" minWidth={860} aria-label="Targets">
            <Table striped verticalSpacing="sm">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Type</Table.Th>
                  <Table.Th>Health</Table.Th>
                  <Table.Th>Last failure</Table.Th>
                  <Table.Th>Since created</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {(d.targets ?? []).map((t) => (
                  <Table.Tr key={t.name} data-testid={`target-${t.name}`}>
                    <Table.Td>
                      <Anchor component={Link} to={`${base}/targets/${enc(t.name ?? '')}`}>
                        {t.name}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{t.type}</Table.Td>
                    <Table.Td>
                      <Stack gap={2} align="flex-start">
                        <HealthBadge health={t.status?.health} />
                        <Text size="xs" c="dimmed">
                          {t.status?.state ? `Connector ${t.status.state}` : 'No connector status'}
                        </Text>
                      </Stack>
                    </Table.Td>
                    <Table.Td maw={420}>
                      <HealthLine facts={t.status ?? {}} />
                    </Table.Td>
                    <Table.Td>
                      <Counters counters={t.status?.counters} />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryState>
    </Stack>
  );
}
