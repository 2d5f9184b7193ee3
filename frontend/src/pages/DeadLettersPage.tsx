import { Alert, Anchor, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ConfirmButton } from '../components/Detail';
import { QueryState } from '../components/states';
import { RelativeTime } from '../components/Time';
import { entryText } from './deadLetters';

export function DeadLettersPage() {
  const qc = useQueryClient();
  const [bus, setBus] = useState('');
  const list = useQuery({
    queryKey: ['dead-letters', bus],
    queryFn: () => api<Schemas['DeadLetterList']>('/dead-letters', { query: { bus, limit: 100 } }),
  });
  const [result, setResult] = useState<Schemas['RedriveResult'] | undefined>();
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h3">
          Dead letters
        </Title>
        <TextInput placeholder="Bus" aria-label="Bus filter" value={bus} onChange={(e) => setBus(e.currentTarget.value)} />
      </Group>
      {result && (
        <Alert color={(result.failedCount ?? 0) > 0 ? 'red' : 'green'} title="Redrive" withCloseButton onClose={() => setResult(undefined)}>
          {(result.entries ?? []).map((e) => (
            <Text size="sm" key={e.id}>
              {entryText(e, 'redriven')}
            </Text>
          ))}
        </Alert>
      )}
      <QueryState query={list} isEmpty={(d) => (d.deadLetters ?? []).length === 0} empty="No dead letters. An event lands here when a target refuses it or every retry fails; from here it can be redriven or discarded.">
        {(d) => (
          <Table.ScrollContainer type="native" minWidth={760} aria-label="Dead letters">
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Id</Table.Th>
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
                    <Table.Td>
                      <Anchor component={Link} to={`/dead-letters/${enc(String(l.id))}`} state={{ deadLetter: l }}>
                        {l.id}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>
                      <RelativeTime value={l.time} />
                    </Table.Td>
                    <Table.Td>{[l.bus, l.rule, l.target].join(' / ')}</Table.Td>
                    <Table.Td>
                      <Code style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{l.reason}</Code>
                    </Table.Td>
                    <Table.Td>{l.attempts}</Table.Td>
                    <Table.Td>
                      <ConfirmButton
                        label="Redrive"
                        title="Redrive?"
                        question={`Deliver the original event of dead letter ${l.id} to its target again?`}
                        run={() => api<Schemas['RedriveResult']>('/dead-letters/redrive', { body: { ids: [String(l.id)] } })}
                        onDone={(r) => {
                          setResult(r);
                          qc.invalidateQueries({ queryKey: ['dead-letters'] });
                        }}
                      />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryState>
    </Stack>
  );
}
