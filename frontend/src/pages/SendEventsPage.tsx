import { Badge, Button, Group, JsonInput, SegmentedControl, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, enc, type PutEventsResponse, type Schemas } from '../api/client';
import { ErrorAlert } from '../components/states';
import { TestEventPanel } from './TestEventPanel';

const exampleBatch = JSON.stringify(
  [
    { specversion: '1.0', id: 'e-1', source: 'shop', type: 'order.created', data: { id: 1, amount: 120 } },
    { specversion: '1.0', id: 'e-2', source: 'shop', type: 'order.created', data: { id: 2, amount: 80 } },
  ],
  null,
  2,
);

export function SendEventsPage() {
  const buses = useQuery({ queryKey: ['buses', 'all'], queryFn: () => api<Schemas['BusList']>('/buses', { query: { limit: 500 } }) });
  const [bus, setBus] = useState<string | null>(null);
  const [mode, setMode] = useState('single');
  const [source, setSource] = useState('shop');
  const [type, setType] = useState('order.created');
  const [subject, setSubject] = useState('');
  const [data, setData] = useState('{\n  "id": 1,\n  "amount": 120\n}');
  const [batch, setBatch] = useState(exampleBatch);
  const [parseError, setParseError] = useState('');

  // The event the single mode would send, for "test against every rule" (null while the data is not JSON): the id
  // is the test's own, stable while the fields stay as they are.
  const testEvent = useMemo(() => {
    try {
      const ev: Record<string, unknown> = { specversion: '1.0', id: 'console-test', source, type, datacontenttype: 'application/json', data: JSON.parse(data) };
      if (subject) ev.subject = subject;
      return ev;
    } catch {
      return null;
    }
  }, [source, type, subject, data]);

  const send = useMutation({
    mutationFn: async () => {
      setParseError('');
      let rawBody: string;
      let contentType: string;
      if (mode === 'single') {
        let payload: unknown;
        try {
          payload = JSON.parse(data);
        } catch {
          throw new Error('The data is not JSON.');
        }
        const ev: Record<string, unknown> = { specversion: '1.0', id: crypto.randomUUID(), source, type, datacontenttype: 'application/json', data: payload };
        if (subject) ev.subject = subject;
        rawBody = JSON.stringify(ev);
        contentType = 'application/cloudevents+json';
      } else {
        rawBody = batch;
        contentType = 'application/cloudevents-batch+json';
      }
      return api<PutEventsResponse>(`/buses/${enc(bus ?? '')}/events`, { rawBody, contentType });
    },
  });

  return (
    <Stack maw={900}>
      <Title order={1} size="h3">
        Send events
      </Title>
      <Group>
        <Select
          label="Bus"
          placeholder={buses.isPending ? 'Loading…' : 'Choose a bus'}
          data={(buses.data?.buses ?? []).map((b) => b.name ?? '')}
          value={bus}
          onChange={setBus}
          searchable
          aria-label="Bus"
        />
        <SegmentedControl mt="lg" value={mode} onChange={setMode} data={[{ value: 'single', label: 'One CloudEvent' }, { value: 'batch', label: 'Batch' }]} />
      </Group>
      <ErrorAlert error={buses.error} title="Could not load the buses" />
      {mode === 'single' ? (
        <>
          <Group grow align="flex-start" wrap="wrap">
            <TextInput miw={180} label="Source" value={source} onChange={(e) => setSource(e.currentTarget.value)} required />
            <TextInput miw={180} label="Type" value={type} onChange={(e) => setType(e.currentTarget.value)} required />
            <TextInput miw={180} label="Subject" value={subject} onChange={(e) => setSubject(e.currentTarget.value)} />
          </Group>
          <JsonInput label="Data (JSON)" autosize minRows={5} value={data} onChange={setData} validationError="Not JSON" aria-label="Event data" />
        </>
      ) : (
        <JsonInput label="Batch: a JSON array of CloudEvents" autosize minRows={10} value={batch} onChange={setBatch} validationError="Not JSON" aria-label="Batch" />
      )}
      <Group>
        <Button onClick={() => send.mutate()} disabled={!bus} loading={send.isPending}>
          Send
        </Button>
        {parseError && <Text c="red">{parseError}</Text>}
      </Group>
      {mode === 'single' && bus && testEvent && <TestEventPanel bus={bus} event={testEvent} />}
      <ErrorAlert error={send.error} title="Not sent" />
      {send.data && (
        <Stack gap="xs" data-testid="put-results">
          <Text>
            {(send.data.entries ?? []).length - (send.data.failedEntryCount ?? 0)} accepted, {send.data.failedEntryCount ?? 0} failed
          </Text>
          <Table.ScrollContainer type="native" minWidth={420} aria-label="Results">
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>#</Table.Th>
                  <Table.Th>Result</Table.Th>
                  <Table.Th>Event id / error</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {(send.data.entries ?? []).map((e, i) => (
                  <Table.Tr key={i}>
                    <Table.Td>{i + 1}</Table.Td>
                    <Table.Td>{e.errorCode ? <Badge color="red">{e.errorCode}</Badge> : <Badge color="green">Accepted</Badge>}</Table.Td>
                    <Table.Td>{e.errorMessage ?? e.eventId}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </Stack>
      )}
    </Stack>
  );
}
