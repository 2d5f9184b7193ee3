import { Badge, Code, Stack, Text, Tooltip, type MantineSize } from '@mantine/core';
import { exactTime, relativeTime } from '../format';
import { countersText, failureCause, healthColor, healthLabel, healthText, healthTimes, healthWords, troubled, type HealthFacts, type SourceCounters, type TargetCounters } from '../health';
import { useNow } from './Time';

/**
 * HealthBadge shows how the deliveries of a target, a source or a connector go (docs/health.md): the state written
 * in full (never the colour alone), its meaning on hover. Colours: src/health.ts.
 */
export function HealthBadge({ health, size = 'sm', testId = 'health' }: { health?: string; size?: MantineSize; testId?: string }) {
  return (
    <Tooltip label={healthWords(health)} multiline maw={320} openDelay={300}>
      <Badge size={size} color={healthColor(health)} data-testid={testId} data-health={health ?? ''} style={{ minWidth: 'max-content', overflow: 'visible' }}>
        {healthLabel(health)}
      </Badge>
    </Tooltip>
  );
}

/**
 * HealthLine says the last failure and since when nothing succeeded ("Last failure 2 min ago (attempt 3):
 * connection refused; no success since 14:02:11"), the exact times on hover; with details, the failure's message
 * and the start of the target's answer under it. It reads the time again every 15 seconds; the data is the
 * caller's to refresh. idle is what it says when nothing happened yet ("No delivery yet"); "" says nothing then.
 */
export function HealthLine({
  facts,
  details = true,
  idle,
  size = 'sm',
  lineClamp,
}: {
  facts: HealthFacts;
  details?: boolean;
  idle?: string;
  size?: MantineSize;
  /** lineClamp cuts the line after so many lines (a builder node); the whole line is then its tooltip. */
  lineClamp?: number;
}) {
  const now = useNow();
  const f = facts.lastFailure;
  const text = healthText(facts, now, (t) => relativeTime(t, now), { idle });
  const failing = (!!f || !!facts.lastError) && troubled(facts.health);
  const message = f?.message && f.message !== failureCause(f) ? f.message : undefined;
  if (text === '') return null;
  return (
    <Stack gap={2} data-testid="last-failure" style={{ minWidth: 0 }}>
      <Text
        size={size}
        c={failing ? 'red' : f || facts.lastError || facts.lastSuccessAt ? undefined : 'dimmed'}
        title={[lineClamp ? text + '.' : '', healthTimes(facts, (t) => exactTime(t))].filter((x) => x !== '').join(' ') || undefined}
        lineClamp={lineClamp}
        style={{ overflowWrap: 'anywhere' }}
      >
        {text}
      </Text>
      {details && message && (
        <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }} data-testid="failure-message">
          {message}
        </Text>
      )}
      {details && f?.response && (
        <Text size="xs" style={{ overflowWrap: 'anywhere' }}>
          It answered: <Code>{f.response}</Code>
        </Text>
      )}
    </Stack>
  );
}

/** Counters writes a target's or source's counters since it was created ("delivered 11 · dead-lettered 1"). */
export function Counters({ counters, size = 'sm' }: { counters?: TargetCounters | SourceCounters; size?: MantineSize }) {
  return (
    <Text size={size} data-testid="counters">
      {countersText(counters)}
    </Text>
  );
}
