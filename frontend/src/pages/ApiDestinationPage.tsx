import { Anchor, Button, Code, Group, Modal, Stack, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ConfirmButton, Crumbs, Fields } from '../components/Detail';
import { ApiDestinationFormView } from '../components/ResourceForms';
import { QueryState } from '../components/states';
import { RelativeTime } from '../components/Time';
import { toast } from '../components/toast';

type ApiDestination = Schemas['ApiDestination'];

export function ApiDestinationPage() {
  const name = useParams().name ?? '';
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const path = `/api-destinations/${enc(name)}`;
  const query = useQuery({ queryKey: ['api-destinations', 'one', name], queryFn: () => api<ApiDestination>(path) });
  return (
    <Stack>
      <Crumbs items={[['API destinations', '/api-destinations'], [name]]} />
      <Group justify="space-between">
        <Title order={1} size="h3">
          API destination {name}
        </Title>
        {query.data && (
          <Group>
            <Button size="xs" variant="light" onClick={() => setEditing(true)}>
              Edit
            </Button>
            <ConfirmButton
              label="Delete"
              color="red"
              title="Delete API destination?"
              question={
                <>
                  Delete the API destination <b>{name}</b>? Targets that use it stop delivering. This cannot be undone.
                </>
              }
              run={() => api(path, { method: 'DELETE' })}
              onDone={() => {
                toast(`API destination ${name} deleted`);
                qc.invalidateQueries({ queryKey: ['api-destinations'] });
                navigate('/api-destinations');
              }}
            />
          </Group>
        )}
      </Group>
      <QueryState query={query}>
        {(a) => (
          <>
            <Fields
              rows={[
                ['Description', a.description],
                [
                  'Connection',
                  a.connection ? (
                    <Anchor component={Link} to={`/connections/${enc(a.connection)}`}>
                      {a.connection}
                    </Anchor>
                  ) : undefined,
                ],
                [
                  'Endpoint',
                  <Code key="ep">
                    {a.httpMethod} {a.invocationEndpoint}
                  </Code>,
                ],
                ['Rate limit', `${a.invocationRateLimitPerSecond ?? 300} requests per second`],
                ['Created', a.createdAt && <RelativeTime key="c" value={a.createdAt} />],
                ['Updated', a.updatedAt && <RelativeTime key="u" value={a.updatedAt} />],
              ]}
            />
            <Modal opened={editing} onClose={() => setEditing(false)} title={`Edit ${a.name}`} size="lg">
              <ApiDestinationFormView
                destination={a}
                onSaved={() => {
                  setEditing(false);
                  qc.invalidateQueries({ queryKey: ['api-destinations'] });
                }}
              />
            </Modal>
          </>
        )}
      </QueryState>
    </Stack>
  );
}
