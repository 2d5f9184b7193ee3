import { Alert, Anchor, Badge, Button, Group, Stack, Table, Text } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ErrorAlert } from '../components/states';
import { verdictRow, verdictSummary } from './events';

/**
 * TestEventPanel matches an event against every rule of a bus, enabled or not, as the bus's router would once the
 * event is stored (POST /api/v1/buses/{bus}/test-event; nothing is stored or delivered), and lists each rule's
 * verdict with why it does not match. event is a CloudEvent in the JSON format; undefined (or no bus) keeps the
 * button disabled. When event changes after a test, the panel says the verdicts are of the event as it was.
 */
export function TestEventPanel({ bus, event }: { bus: string | null | undefined; event: unknown }) {
  const [tested, setTested] = useState<string | undefined>();
  const test = useMutation({
    mutationFn: (ev: unknown) => api<Schemas['TestBusEventOutput']>(`/buses/${enc(bus ?? '')}/test-event`, { body: { event: ev } }),
  });
  const current = event === undefined ? undefined : JSON.stringify(event);
  const run = () => {
    setTested(current);
    test.mutate(event);
  };
  const ready = !!bus && current !== undefined;
  return (
    <Stack gap="xs" data-testid="test-event">
      <Group gap="sm">
        <Button variant="light" onClick={run} loading={test.isPending} disabled={!ready}>
          Test against every rule
        </Button>
        <Text size="sm" c="dimmed">
          {ready ? 'Matches the event against every rule of the bus, as its router would; nothing is stored or delivered.' : bus ? 'Give an event to test.' : 'Choose a bus to test against.'}
        </Text>
      </Group>
      <ErrorAlert error={test.error} title="Could not test the event" />
      {test.data && (
        <Stack gap="xs">
          <Text size="sm" fw={500} data-testid="test-summary" role="status">
            {verdictSummary(test.data)}
          </Text>
          {tested !== current && (
            <Alert color="yellow" p="xs" data-testid="test-stale">
              The event changed since it was tested: these verdicts are of the event as it was. Test again.
            </Alert>
          )}
          {(test.data.rules ?? []).length > 0 && (
            <Table.ScrollContainer type="native" minWidth={640} aria-label="Verdicts">
              <Table striped verticalSpacing="xs" data-testid="verdicts">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Rule</Table.Th>
                    <Table.Th>Verdict</Table.Th>
                    <Table.Th>Why</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {(test.data.rules ?? []).map(verdictRow).map((v) => (
                    <Table.Tr key={v.rule} data-testid="verdict" data-rule={v.rule} data-match={v.match}>
                      <Table.Td style={{ overflowWrap: 'anywhere' }}>
                        <Anchor component={Link} to={`/buses/${enc(bus ?? '')}/rules/${enc(v.rule)}`} size="sm">
                          {v.rule}
                        </Anchor>
                        {v.state === 'DISABLED' && (
                          <Badge color="gray" size="sm" ml={6}>
                            Disabled
                          </Badge>
                        )}
                      </Table.Td>
                      <Table.Td>
                        <Badge color={v.match ? 'green' : 'gray'} style={{ minWidth: 'max-content' }}>
                          {v.match ? 'Matches' : 'No match'}
                        </Badge>
                      </Table.Td>
                      <Table.Td style={{ overflowWrap: 'anywhere' }}>
                        <Text size="sm">{v.why}</Text>
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
        </Stack>
      )}
    </Stack>
  );
}
