import { Anchor, Button, Group, Modal, Stack, Table, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { QueryState } from '../components/states';
import { RelativeTime } from '../components/Time';
import { exactTime } from '../format';
import { StartReplayForm } from './ReplayForm';
import { ReplayProgress, ReplayStateBadge } from './ReplayStatus';
import { anyLive, destinationText, windowText } from './replays';

const PAGE_SIZE = 50;
/** LIST_REFRESH_MS is how often the list is read again while a replay shown has not ended. */
const LIST_REFRESH_MS = 2000;

/**
 * ReplaysPage (/replays) lists the account's replays by name, a page at a time, with their state and progress,
 * read again every 2 s while one shown has not ended; "Start a replay" opens StartReplayForm.
 */
export function ReplaysPage() {
  const qc = useQueryClient();
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const [starting, setStarting] = useState(false);
  const token = tokens[tokens.length - 1];
  const list = useQuery({
    queryKey: ['replays', 'list', token],
    queryFn: () => api<Schemas['ReplayList']>('/replays', { query: { limit: PAGE_SIZE, nextToken: token } }),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (anyLive(q.state.data?.replays) ? LIST_REFRESH_MS : false),
  });

  return (
    <Stack maw={1400}>
      <Group justify="space-between">
        <Title order={1} size="h3">
          Replays
        </Title>
        <Button onClick={() => setStarting(true)}>Start a replay</Button>
      </Group>
      <Text size="sm">
        A replay puts the events an archive holds from a window of time on the archive&apos;s bus again, with the extension replayname, to every rule,
        some rules or one target. Archives are made on each bus&apos;s archives page.
      </Text>
      <QueryState
        query={list}
        isEmpty={(d) => (d.replays ?? []).length === 0 && tokens.length === 1}
        empty="No replays yet. Start one to put the events an archive holds from a window of time on its bus again."
      >
        {(d) => (
          <Stack gap="xs">
            <Table.ScrollContainer type="native" minWidth={1200} aria-label="Replays">
              <Table striped verticalSpacing="xs">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>State</Table.Th>
                    <Table.Th w={260}>Progress</Table.Th>
                    <Table.Th>Archive</Table.Th>
                    <Table.Th>Destination</Table.Th>
                    <Table.Th>Window</Table.Th>
                    <Table.Th>Started</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {(d.replays ?? []).map((r) => (
                    <Table.Tr key={r.name} data-testid="replay-row" data-name={r.name}>
                      <Table.Td>
                        <Anchor component={Link} to={`/replays/${enc(r.name ?? '')}`} size="sm">
                          {r.name}
                        </Anchor>
                      </Table.Td>
                      <Table.Td>
                        <ReplayStateBadge state={r.state} />
                        {r.state === 'FAILED' && r.stateReason && (
                          <Text size="xs" c="dimmed" maw={220} mt={4} style={{ overflowWrap: 'anywhere' }}>
                            {r.stateReason}
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>
                        <ReplayProgress replay={r} />
                      </Table.Td>
                      <Table.Td>
                        {r.destination?.bus ? (
                          <Anchor component={Link} to={`/buses/${enc(r.destination.bus)}/archives`} size="sm">
                            {r.archive}
                          </Anchor>
                        ) : (
                          r.archive
                        )}
                      </Table.Td>
                      <Table.Td style={{ overflowWrap: 'anywhere' }}>{destinationText(r.destination)}</Table.Td>
                      <Table.Td maw={280}>
                        <Text size="sm">{windowText(r, (t) => exactTime(t))}</Text>
                      </Table.Td>
                      <Table.Td>
                        <RelativeTime value={r.replayStartTime} />
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
            <Group justify="space-between">
              <Text size="sm">Page {tokens.length}</Text>
              <Group gap="xs">
                <Button variant="default" size="xs" disabled={tokens.length === 1} onClick={() => setTokens((t) => t.slice(0, -1))}>
                  Previous page
                </Button>
                <Button variant="default" size="xs" disabled={!d.nextToken} onClick={() => d.nextToken && setTokens((t) => [...t, d.nextToken])}>
                  Next page
                </Button>
              </Group>
            </Group>
          </Stack>
        )}
      </QueryState>
      <Modal opened={starting} onClose={() => setStarting(false)} title="Start a replay" size="lg">
        {starting && (
          <StartReplayForm
            onStarted={() => {
              setStarting(false);
              void qc.invalidateQueries({ queryKey: ['replays'] });
            }}
          />
        )}
      </Modal>
    </Stack>
  );
}
