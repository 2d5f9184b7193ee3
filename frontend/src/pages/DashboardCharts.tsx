// The dashboard's charts, loaded with import() when the dashboard first shows one: @mantine/charts and Recharts
// stay out of the bundle a first visit loads (scripts/bundle-budget.mjs). DashboardPage is the only importer.
import '@mantine/charts/styles.css';
import { LineChart, type LineChartSeries } from '@mantine/charts';
import { Box, SimpleGrid, Text } from '@mantine/core';
import { useNow } from '../components/Time';
import {
  COUNT_METRICS,
  countText,
  eventsChartLabel,
  latencyChartLabel,
  latencyText,
  metricLabels,
  rangeWords,
  timeTick,
  timeTicks,
  tooltipTime,
  type BusRow,
  type CountMetric,
  type Range,
} from './dashboard';

const colors: Record<CountMetric, string> = {
  in: 'indigo.6',
  matched: 'cyan.7',
  delivered: 'teal.7',
  failed: 'red.7',
  deadLettered: 'orange.7',
};

// The failures are dashed as well as red and orange: the colour is not the only thing that tells the lines apart.
const eventSeries: LineChartSeries[] = COUNT_METRICS.map((m) => ({
  name: m,
  label: metricLabels[m],
  color: colors[m],
  strokeDasharray: m === 'failed' || m === 'deadLettered' ? '5 3' : undefined,
}));
const latencySeries: LineChartSeries[] = [{ name: 'latencyMs', label: 'Mean latency', color: 'grape.7' }];

const CHART_HEIGHT = 200;

interface ChartProps {
  label: string;
  caption: string;
  series: LineChartSeries[];
  rows: BusRow[];
  range: Range;
  /** format writes a value in the tooltip, axis one on the value axis. */
  format: (v: number) => string;
  axis: (v: number) => string;
  /** counts says the values are whole numbers: the axis writes no fractions of an event. */
  counts?: boolean;
}

/**
 * Chart is one chart of a bus: a figure named after what it shows (aria-label; the SVG, which takes the keyboard
 * focus so that the arrow keys move the tooltip, gets it as its title), with a caption. Steps without a value are
 * gaps, not zeros.
 */
function Chart({ label, caption, series, rows, range, format, axis, counts = false }: ChartProps) {
  const now = useNow();
  const ticks = rows.length > 0 ? timeTicks(rows[0].t, rows[rows.length - 1].t, range) : [];
  return (
    <Box component="figure" m={0} aria-label={label} style={{ minWidth: 0 }}>
      <Text component="figcaption" size="sm" fw={500} mb={4}>
        {caption}
      </Text>
      <LineChart
        h={CHART_HEIGHT}
        data={rows}
        dataKey="t"
        series={series}
        curveType="linear"
        withDots={false}
        connectNulls={false}
        withLegend={series.length > 1}
        legendProps={{ itemSorter: (item) => series.findIndex((s) => s.name === item.dataKey) }}
        valueFormatter={format}
        xAxisProps={{ type: 'number', scale: 'time', domain: ['dataMin', 'dataMax'], ticks, tickFormatter: (t: number) => timeTick(t) }}
        yAxisProps={{ width: 52, allowDecimals: !counts, tickFormatter: axis }}
        tooltipProps={{ labelFormatter: (t) => tooltipTime(t, now) }}
        lineChartProps={{ title: label }}
      />
    </Box>
  );
}

/**
 * DashboardCharts shows a bus's events and mean delivery latency per step over the range, side by side when wide;
 * the latency chart only when something was delivered.
 */
export default function DashboardCharts({ bus, rows, range, step }: { bus: string; rows: BusRow[]; range: Range; step: string }) {
  const delivered = rows.some((r) => r.latencyMs !== null);
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} spacing="lg">
      <Chart
        label={eventsChartLabel(bus, range, step)}
        caption={step ? `Events per ${step}` : 'Events'}
        series={eventSeries}
        rows={rows}
        range={range}
        format={(v) => countText(v)}
        axis={(v) => countText(v)}
        counts
      />
      {delivered ? (
        <Chart label={latencyChartLabel(bus, range)} caption="Mean delivery latency (ms)" series={latencySeries} rows={rows} range={range} format={latencyText} axis={(v) => countText(v, 1)} />
      ) : (
        <Text size="sm" c="dimmed">
          Nothing was delivered over {rangeWords[range]}: no delivery latency to show.
        </Text>
      )}
    </SimpleGrid>
  );
}
