import { Alert, Anchor, Button, Group, Modal, Paper, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router-dom';
import { api, enc } from '../api/client';
import { Crumbs, Fields } from '../components/Detail';
import { ErrorAlert, QueryState } from '../components/states';
import { RelativeTime } from '../components/Time';
import { toast } from '../components/toast';
import { exactTime } from '../format';
import { ReplayProgress, ReplayStateBadge } from './ReplayStatus';
import { canCancel, countText, destinationText, isTerminal, windowText, type Replay } from './replays';

/** REPLAY_REFRESH_MS is how often a replay that has not ended is read again: the server updates it every second. */
const REPLAY_REFRESH_MS = 1000;

/**
 * CancelReplay asks before it cancels (POST /replays/{replay}/cancel); what was replayed stays replayed. Its
 * opener and the dialog's button are named apart, so that each is found by its name alone.
 */
function CancelReplay({ name, onDone }: { name: string; onDone: (r: Replay) => void }) {
  const [open, setOpen] = useState(false);
  const cancel = useMutation({
    mutationFn: () => api<Replay>(`/replays/${enc(name)}/cancel`, { method: 'POST' }),
    onSuccess: (r) => {
      setOpen(false);
      toast(r.state === 'CANCELLED' ? `Replay ${name} cancelled` : `Replay ${name} cancelling`);
      onDone(r);
    },
  });
  return (
    <>
      <Button
        color="red"
        variant="light"
        onClick={() => {
          cancel.reset();
          setOpen(true);
        }}
      >
        Cancel this replay
      </Button>
      <Modal opened={open} onClose={() => setOpen(false)} title="Cancel the replay?">
        <Text>Stop replaying {name}? The events it replayed so far stay replayed; the rest of its window is not.</Text>
        <ErrorAlert error={cancel.error} />
        <Group justify="flex-end" mt="sm">
          <Button variant="default" onClick={() => setOpen(false)}>
            Keep it running
          </Button>
          <Button color="red" onClick={() => cancel.mutate()} loading={cancel.isPending}>
            Cancel replay
          </Button>
        </Group>
      </Modal>
    </>
  );
}

/**
 * ReplayPage (/replays/:replay) shows a replay: its archive, window, destination and rate, and its progress and
 * counts, read again every second until it ends; Cancel while it is STARTING or RUNNING; why it FAILED.
 */
export function ReplayPage() {
  const { replay = '' } = useParams();
  const qc = useQueryClient();
  const key = ['replays', 'one', replay];
  const query = useQuery({
    queryKey: key,
    queryFn: () => api<Replay>(`/replays/${enc(replay)}`),
    refetchInterval: (q) => (q.state.data && !isTerminal(q.state.data.state) ? REPLAY_REFRESH_MS : false),
  });
  const current = query.data;
  return (
    <Stack maw={1400}>
      <Crumbs items={[['Replays', '/replays'], [replay]]} />
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={1} size="h3">
            Replay {replay}
          </Title>
          {current && <ReplayStateBadge state={current.state} />}
        </Group>
        {current && canCancel(current.state) && (
          <CancelReplay
            name={replay}
            onDone={(answer) => {
              qc.setQueryData(key, answer);
              void qc.invalidateQueries({ queryKey: ['replays'] });
            }}
          />
        )}
      </Group>
      <QueryState query={query}>
        {(r) => (
          <>
            {r.state === 'FAILED' && (
              <Alert color="red" title="The replay failed" data-testid="replay-reason">
                {r.stateReason || 'The server gave no reason.'}
              </Alert>
            )}
            {r.state === 'CANCELLING' && <Text size="sm">Cancelling: the replay stops once its connector is removed.</Text>}
            <Paper withBorder p="md" maw={900}>
              <ReplayProgress replay={r} size="lg" />
            </Paper>
            <Fields
              rows={[
                ['Description', r.description],
                [
                  'Archive',
                  r.destination?.bus ? (
                    <Anchor component={Link} to={`/buses/${enc(r.destination.bus)}/archives`}>
                      {r.archive}
                    </Anchor>
                  ) : (
                    r.archive
                  ),
                ],
                ['Window', windowText(r, (t) => exactTime(t))],
                ['Destination', destinationText(r.destination)],
                ['Rate', r.rate ? `At most ${countText(r.rate)} events per second` : undefined],
                ['Last event replayed', r.eventLastReplayedTime ? `Stored by the bus ${exactTime(r.eventLastReplayedTime)}` : undefined],
                ['Started', <RelativeTime key="started" value={r.replayStartTime} />],
                ['Ended', r.replayEndTime ? <RelativeTime key="ended" value={r.replayEndTime} /> : undefined],
              ]}
            />
          </>
        )}
      </QueryState>
    </Stack>
  );
}
