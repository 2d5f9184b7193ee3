import { Button, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Schemas } from '../api/client';
import { ErrorAlert, QueryState } from '../components/states';

export function DeadLettersPage() {
  const qc = useQueryClient();
  const [bus, setBus] = useState('');
  const list = useQuery({
    queryKey: ['dead-letters', bus],
    queryFn: () => api<Schemas['DeadLetterList']>('/dead-letters', { query: { bus, limit: 100 } }),
  });
  const redrive = useMutation({
    mutationFn: (ids: string[]) => api<Schemas['RedriveResult']>('/dead-letters/redrive', { body: { ids } }),
    onSettled: () => qc.invalidateQueries({ queryKey: ['dead-letters'] }),
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={3}>Dead letters</Title>
        <TextInput placeholder="Bus" aria-label="Bus filter" value={bus} onChange={(e) => setBus(e.currentTarget.value)} />
      </Group>
      <ErrorAlert error={redrive.error} />
      {redrive.data && <Text size="sm">Redrive: {JSON.stringify(redrive.data)}</Text>}
      <QueryState query={list} isEmpty={(d) => (d.deadLetters ?? []).length === 0} empty="No dead letters.">
        {(d) => (
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Time</Table.Th>
                <Table.Th>Bus / rule / target</Table.Th>
                <Table.Th>Reason</Table.Th>
                <Table.Th>Attempts</Table.Th>
                <Table.Th />
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(d.deadLetters ?? []).map((l) => (
                <Table.Tr key={l.id}>
                  <Table.Td>{l.time}</Table.Td>
                  <Table.Td>{[l.bus, l.rule, l.target].join(' / ')}</Table.Td>
                  <Table.Td>
                    <Code>{l.reason}</Code>
                  </Table.Td>
                  <Table.Td>{l.attempts}</Table.Td>
                  <Table.Td>
                    <Button size="compact-xs" onClick={() => redrive.mutate([String(l.id)])}>
                      redrive
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </QueryState>
    </Stack>
  );
}
