import { Anchor, Badge, Box, Card, Center, Group, Loader, Paper, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useId, type ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { HealthBadge } from '../components/Health';
import { QueryState } from '../components/states';
import { RelativeTime, useNow } from '../components/Time';
import { exactTime, goDurationText } from '../format';
import { clockTime } from '../health';
import {
  attentionOf,
  busHistories,
  COUNT_METRICS,
  countText,
  latencyText,
  metricLabels,
  ownerTitle,
  RANGES,
  rangeLabels,
  rangeOf,
  rangeWords,
  type Attention,
  type AttentionItem,
  type BusHistory,
  type CountMetric,
  type MetricsHistory,
  type Range,
} from './dashboard';

// The charts bring Recharts along: loaded when the first bus card shows, not with the page.
const DashboardCharts = lazy(() => import('./DashboardCharts'));

const REFRESH_MS = 10_000;

// The height the charts take once loaded (DashboardCharts: a caption, a legend and 200 px of chart), held while
// they load so that the cards below do not jump.
const CHARTS_MIN_HEIGHT = 260;

/** Since says since when the trouble lasts and when the last failure and success were, in one line. */
function Since({ item }: { item: AttentionItem }) {
  const now = useNow();
  const s = item.success;
  const parts: ReactNode[] = [];
  if (s?.kind === 'none-since') {
    parts.push(
      <span key="since">
        Failing since{' '}
        <time dateTime={s.at} title={exactTime(s.at)}>
          {clockTime(s.at, now)}
        </time>
      </span>,
    );
  }
  if (s?.kind === 'never') parts.push(<span key="never">No success since the task started</span>);
  // The line's first words take a capital.
  const lead = (words: string) => (parts.length === 0 ? words[0].toUpperCase() + words.slice(1) : words);
  if (item.lastFailureAt) parts.push(<RelativeTime key="failure" value={item.lastFailureAt} prefix={lead('last failure ')} />);
  if (s?.kind === 'recovered' || s?.kind === 'last') parts.push(<RelativeTime key="success" value={s.at} prefix={lead('last success ')} />);
  if (parts.length === 0) return null;
  return (
    <Text size="xs" c="dimmed">
      {parts.flatMap((p, i) => (i === 0 ? [p] : [' · ', p]))}
    </Text>
  );
}

/**
 * AttentionRow is one connector in trouble: its health, what it runs (a link to where it is fixed), why and since
 * when.
 */
function AttentionRow({ item }: { item: AttentionItem }) {
  const { title, context } = ownerTitle(item.owner, item.connector);
  return (
    <Paper component="li" withBorder p="sm" data-testid="attention-item" data-connector={item.connector}>
      <Group gap="sm" wrap="nowrap" align="flex-start">
        <HealthBadge health={item.trouble} />
        <Stack gap={2} style={{ minWidth: 0 }}>
          <Anchor component={Link} to={item.link} size="sm" style={{ overflowWrap: 'anywhere' }}>
            <Text span fw={600} inherit>
              {title}
            </Text>
            {context && ` · ${context}`}
          </Anchor>
          {item.cause && (
            <Text size="sm" c="red" style={{ overflowWrap: 'anywhere' }}>
              {item.cause}
            </Text>
          )}
          {item.message && (
            <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }} data-testid="failure-message">
              {item.message}
            </Text>
          )}
          <Since item={item} />
        </Stack>
      </Group>
    </Paper>
  );
}

/** AttentionList lists the connectors in trouble, the worst first; it says so when there is none. */
function AttentionList({ attention }: { attention: Attention }) {
  const { items, unassigned } = attention;
  if (items.length === 0 && unassigned === 0) {
    return (
      <Text c="dimmed" data-testid="empty">
        All targets and sources are healthy: none is failing, dead-lettering or retrying.
      </Text>
    );
  }
  return (
    <Stack component="ul" gap="xs" p={0} m={0} style={{ listStyle: 'none' }} data-testid="attention">
      {items.map((i) => (
        <AttentionRow key={i.connector} item={i} />
      ))}
      {unassigned > 0 && (
        <Paper component="li" withBorder p="sm" data-testid="attention-unassigned">
          <Group gap="sm" wrap="nowrap" align="flex-start">
            <Badge size="sm" color="orange" style={{ minWidth: 'max-content', overflow: 'visible' }}>
              UNASSIGNED
            </Badge>
            <Stack gap={2} style={{ minWidth: 0 }}>
              <Anchor component={Link} to="/runtime" size="sm" fw={600}>
                {unassigned === 1 ? '1 connector waits for a worker' : `${unassigned} connectors wait for a worker`}
              </Anchor>
              <Text size="xs" c="dimmed">
                No worker runs {unassigned === 1 ? 'it' : 'them'}; the events wait in the buses’ streams. It lasts a moment while the workers share out the tasks.
              </Text>
            </Stack>
          </Group>
        </Paper>
      )}
    </Stack>
  );
}

// The totals of failures are in colour when there are some (the theme makes coloured text readable).
const failureColor: Partial<Record<CountMetric, string>> = { failed: 'red', deadLettered: 'orange' };

/** Totals are a bus's events over the range and its mean delivery latency. */
function Totals({ totals, range }: { totals: BusHistory['totals']; range: Range }) {
  const cell = (key: string, label: string, value: string, c?: string) => (
    <div key={key}>
      <Text component="dt" size="xs" c="dimmed">
        {label}
      </Text>
      <Text component="dd" m={0} fw={700} c={c} data-testid={`total-${key}`}>
        {value}
      </Text>
    </div>
  );
  return (
    <Box
      component="dl"
      aria-label={`Totals over ${rangeWords[range]}`}
      m={0}
      style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fill, minmax(7rem, 1fr))', gap: 'var(--mantine-spacing-xs)' }}
      data-testid="totals"
    >
      {COUNT_METRICS.map((m) => cell(m, metricLabels[m], countText(totals[m]), totals[m] > 0 ? failureColor[m] : undefined))}
      {cell('latencyMs', 'Mean latency', latencyText(totals.latencyMs))}
    </Box>
  );
}

/** BusCard is a bus's totals and charts over the range; the charts load on first use. */
function BusCard({ history, range, step }: { history: BusHistory; range: Range; step: string }) {
  const id = useId();
  const { bus, rows, totals } = history;
  return (
    <Card component="article" withBorder aria-labelledby={id} data-testid="bus-card" data-bus={bus}>
      <Stack gap="md">
        <Title order={3} size="h4" id={id} style={{ overflowWrap: 'anywhere' }}>
          <Anchor component={Link} to={`/buses/${enc(bus)}`} inherit>
            {bus}
          </Anchor>
        </Title>
        <Totals totals={totals} range={range} />
        {rows.length === 0 ? (
          <Text c="dimmed" size="sm">
            No steps in this range yet.
          </Text>
        ) : (
          <Suspense
            fallback={
              <Center mih={CHARTS_MIN_HEIGHT}>
                <Loader size="sm" aria-label="Loading" />
              </Center>
            }
          >
            <DashboardCharts bus={bus} rows={rows} range={range} step={step} />
          </Suspense>
        )}
      </Stack>
    </Card>
  );
}

/** BusCards are the buses' cards, one under the other, from the metrics history. */
function BusCards({ history, range }: { history: MetricsHistory; range: Range }) {
  const buses = busHistories(history.series);
  if (buses.length === 0) {
    return (
      <Text c="dimmed" data-testid="empty-metrics">
        No metrics yet. The control plane samples the runtime’s counters every few seconds: the buses show here once it has sampled twice.
      </Text>
    );
  }
  const step = goDurationText(history.step);
  return (
    <Stack gap="md">
      {buses.map((h) => (
        <BusCard key={h.bus} history={h} range={range} step={step} />
      ))}
    </Stack>
  );
}

/**
 * DashboardPage is the console's overview: the connectors that need attention first, the worst first, each linked
 * to the page where it is fixed, then each bus's events and delivery latency over the last hour or day (the range
 * is kept in the address, ?range=1d). Both refresh every 10 seconds.
 */
export function DashboardPage() {
  const [search, setSearch] = useSearchParams();
  const range = rangeOf(search.get('range'));
  const metrics = useQuery({
    queryKey: ['metrics', range],
    queryFn: () => api<MetricsHistory>('/metrics', { query: { range } }),
    refetchInterval: REFRESH_MS,
  });
  const connectors = useQuery({
    queryKey: ['runtime', 'connectors'],
    queryFn: () => api<Schemas['RuntimeConnectorList']>('/runtime/connectors'),
    refetchInterval: REFRESH_MS,
  });
  // The switch replaces the address rather than adding to the history: Back leaves the dashboard.
  const setRange = (r: string) =>
    setSearch(
      (prev) => {
        const next = new URLSearchParams(prev);
        if (rangeOf(r) === '1h') next.delete('range');
        else next.set('range', r);
        return next;
      },
      { replace: true },
    );
  return (
    <Stack gap="lg">
      <Group justify="space-between" gap="sm">
        <Title order={1} size="h3">
          Dashboard
        </Title>
        <Group gap="sm">
          <Text size="xs" c="dimmed">
            Refreshed every {REFRESH_MS / 1000} s
          </Text>
          <SegmentedControl aria-label="Range" size="xs" value={range} onChange={setRange} data={RANGES.map((r) => ({ value: r, label: rangeLabels[r] }))} />
        </Group>
      </Group>
      <Stack gap="xs" component="section" aria-labelledby="attention-title">
        <Title order={2} size="h4" id="attention-title">
          Needs attention
        </Title>
        <QueryState query={connectors}>{(d) => <AttentionList attention={attentionOf(d.connectors)} />}</QueryState>
      </Stack>
      <Stack gap="xs" component="section" aria-labelledby="buses-title">
        <Title order={2} size="h4" id="buses-title">
          Buses
        </Title>
        <QueryState query={metrics}>{(d) => <BusCards history={d} range={range} />}</QueryState>
      </Stack>
    </Stack>
  );
}
