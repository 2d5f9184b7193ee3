import { Anchor, Badge, Button, Code, Group, Stack, Tabs, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router-dom';
import { errorText } from '../api/problem';
import { api, enc, type Rule, type Schemas, type Source } from '../api/client';
import { Crumbs } from '../components/Detail';
import { Counters, HealthBadge, HealthLine } from '../components/Health';
import { ResourceList } from '../components/ResourceList';
import { RelativeTime } from '../components/Time';

type EventType = Schemas['EventType'];

/** StateToggle enables or disables a rule or a source (POST <path>/enable or /disable). */
function StateToggle({ path, state, queryKey }: { path: string; state?: string; queryKey: string }) {
  const qc = useQueryClient();
  const on = state !== 'DISABLED';
  const toggle = useMutation({
    mutationFn: () => api(`${path}/${on ? 'disable' : 'enable'}`, { method: 'POST' }),
    onSettled: () => qc.invalidateQueries({ queryKey: [queryKey] }),
  });
  return (
    <Button size="xs" variant="light" loading={toggle.isPending} onClick={() => toggle.mutate()} color={toggle.isError ? 'red' : undefined} title={toggle.isError ? errorText(toggle.error) : undefined}>
      {on ? 'Disable' : 'Enable'}
    </Button>
  );
}

export function BusPage() {
  const bus = useParams().bus ?? '';
  const base = `/buses/${enc(bus)}`;
  return (
    <Stack>
      <Crumbs items={[['Buses', '/buses'], [bus]]} />
      <Title order={1} size="h3">
        Bus {bus}
      </Title>
      <Group gap="xs">
        <Button size="xs" variant="light" component={Link} to={`${base}/events`}>
          Search events
        </Button>
        <Button size="xs" variant="light" component={Link} to={`${base}/tail`}>
          Live tail
        </Button>
        <Button size="xs" variant="light" component={Link} to={`${base}/log`}>
          Log
        </Button>
        <Button size="xs" variant="light" component={Link} to={`${base}/archives`}>
          Archives
        </Button>
      </Group>
      <Tabs defaultValue="rules">
        <Tabs.List>
          <Tabs.Tab value="rules">Rules</Tabs.Tab>
          <Tabs.Tab value="sources">Sources</Tabs.Tab>
          <Tabs.Tab value="types">Event types</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="rules" pt="md">
          <ResourceList<Rule>
            title="Rules"
            noun="rule"
            headingOrder={2}
            minWidth={760}
            queryKey={['rules', bus]}
            serverSearch
            load={async (nextToken, namePrefix) => {
              const d = await api<Schemas['RuleList']>(`${base}/rules`, { query: { nextToken, namePrefix, limit: 50 } });
              return { items: d.rules ?? [], nextToken: d.nextToken };
            }}
            nameOf={(r) => r.name ?? ''}
            columns={[
              { label: 'Name', render: (r) => <Anchor component={Link} to={`${base}/rules/${enc(r.name ?? '')}`}>{r.name}</Anchor> },
              { label: 'State', render: (r) => <Badge color={r.state === 'DISABLED' ? 'gray' : 'green'}>{r.state}</Badge> },
              { label: 'Pattern', render: (r) => <Code>{JSON.stringify(r.eventPattern)}</Code> },
            ]}
            actions={(r) => (
              <>
                <StateToggle path={`${base}/rules/${enc(r.name ?? '')}`} state={r.state} queryKey="rules" />
                <Button size="xs" variant="light" component={Link} to={`/builder/${enc(bus)}/${enc(r.name ?? '')}`}>
                  Open in builder
                </Button>
              </>
            )}
            remove={(r) => api(`${base}/rules/${enc(r.name ?? '')}`, { method: 'DELETE' })}
            emptyText="No rules on this bus yet. A rule sends the events that match its pattern to its targets: build one in the builder."
          />
        </Tabs.Panel>
        <Tabs.Panel value="sources" pt="md">
          <ResourceList<Source>
            title="Sources"
            noun="source"
            headingOrder={2}
            minWidth={980}
            queryKey={['sources', bus]}
            serverSearch
            refetchInterval={5000}
            load={async (nextToken, namePrefix) => {
              const d = await api<Schemas['SourceList']>(`${base}/sources`, { query: { nextToken, namePrefix, limit: 50 } });
              return { items: d.sources ?? [], nextToken: d.nextToken };
            }}
            nameOf={(s) => s.name ?? ''}
            columns={[
              { label: 'Name', render: (s) => s.name },
              { label: 'Type', render: (s) => s.type },
              { label: 'State', render: (s) => <Badge color={s.state === 'DISABLED' ? 'gray' : 'green'}>{s.state}</Badge> },
              {
                label: 'Health',
                render: (s) => (
                  <Stack gap={2} align="flex-start" maw={380} data-testid={`source-${s.name}`}>
                    <HealthBadge health={s.status?.health} />
                    <HealthLine facts={s.status ?? {}} idle="Nothing stored yet" size="xs" />
                  </Stack>
                ),
              },
              { label: 'Since created', render: (s) => <Counters counters={s.status?.counters} size="xs" /> },
            ]}
            create={{ run: (body) => api(`${base}/sources`, { body }), example: { name: 'tick', type: 'schedule', config: { 'schedule.expression': 'rate(1 minute)' } } }}
            edit={{
              // Secret values come back as "***"; sent back so, the stored value is kept.
              body: (s) => ({ type: s.type, description: s.description ?? '', config: s.config ?? {} }),
              run: (s, body) => api(`${base}/sources/${enc(s.name ?? '')}`, { method: 'PUT', body }),
            }}
            actions={(s) => <StateToggle path={`${base}/sources/${enc(s.name ?? '')}`} state={s.state} queryKey="sources" />}
            remove={(s) => api(`${base}/sources/${enc(s.name ?? '')}`, { method: 'DELETE' })}
            emptyText="No sources feed this bus. A source (a schedule, a webhook, MQTT, …) puts events on the bus: create one here or in the builder."
          />
        </Tabs.Panel>
        <Tabs.Panel value="types" pt="md">
          <ResourceList<EventType>
            title="Event types"
            noun="event type"
            headingOrder={2}
            queryKey={['event-types', bus]}
            load={async (nextToken) => {
              const d = await api<Schemas['EventTypeList']>(`${base}/event-types`, { query: { nextToken, limit: 50 } });
              return { items: d.eventTypes ?? [], nextToken: d.nextToken };
            }}
            nameOf={(t) => t.type ?? ''}
            columns={[
              { label: 'Type', render: (t) => t.type },
              { label: 'Source', render: (t) => t.source },
              { label: 'Count', render: (t) => t.count },
              { label: 'Last seen', render: (t) => <RelativeTime value={t.lastSeen} /> },
            ]}
            emptyText="No events seen on this bus yet."
          />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
