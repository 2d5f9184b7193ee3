import { Badge, Group, Progress, Stack, Text } from '@mantine/core';
import { percentOf, percentText, progressFraction, replayedText, stateColor, type Replay } from './replays';

/** ReplayStateBadge shows a replay's state written in full (never the colour alone). */
export function ReplayStateBadge({ state }: { state?: string }) {
  return (
    <Badge color={stateColor(state)} data-testid="replay-state" data-state={state ?? ''} style={{ minWidth: 'max-content', overflow: 'visible' }}>
      {state ?? 'UNKNOWN'}
    </Badge>
  );
}

/**
 * ReplayProgress shows how far through its window a replay is (replays.ts progressFraction) as a bar and a
 * percentage, and its counts under them. While the fraction is not known (nothing replayed yet) the bar is an
 * indeterminate progressbar: it has no value rather than a 0% that nothing measured. The data is the caller's to
 * refresh.
 */
export function ReplayProgress({ replay, size = 'sm' }: { replay: Replay; size?: 'sm' | 'lg' }) {
  const f = progressFraction(replay);
  const label = `Progress of replay ${replay.name ?? ''}`;
  return (
    <Stack gap={4} data-testid="replay-progress" data-percent={f === undefined ? '' : percentOf(f)} miw={160}>
      <Group gap="xs" wrap="nowrap">
        {f === undefined ? (
          <Progress.Root size={size} role="progressbar" aria-label={label} aria-valuetext="Not known yet" style={{ flex: 1 }}>
            <Progress.Section value={0} withAria={false} />
          </Progress.Root>
        ) : (
          <Progress size={size} value={percentOf(f)} color={stateColor(replay.state)} aria-label={label} style={{ flex: 1 }} />
        )}
        <Text size="sm" w={40} ta="right">
          {percentText(f)}
        </Text>
      </Group>
      <Text size={size === 'lg' ? 'md' : 'sm'}>{replayedText(replay)}</Text>
    </Stack>
  );
}
