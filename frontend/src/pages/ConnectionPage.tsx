import { Anchor, Badge, Button, Code, Group, List, Modal, Stack, Title } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ConfirmButton, Crumbs, Fields } from '../components/Detail';
import { ConnectionFormView } from '../components/ResourceForms';
import { QueryState } from '../components/states';
import { RelativeTime } from '../components/Time';
import { paramsToRows } from '../forms/resourceForms';
import { toast } from '../components/toast';

type Connection = Schemas['Connection'];

/** authRows are the authorization's fields the API answers; secrets are never answered and shown as stored. */
function authRows(c: Connection): [string, string][] {
  const a = c.authParameters;
  const stored = 'stored (never shown)';
  switch (c.authorizationType) {
    case 'BASIC':
      return [
        ['Username', a?.basicAuthParameters?.username ?? ''],
        ['Password', stored],
      ];
    case 'API_KEY':
      return [
        ['Header name', a?.apiKeyAuthParameters?.apiKeyName ?? ''],
        ['API key', stored],
      ];
    case 'OAUTH_CLIENT_CREDENTIALS': {
      const o = a?.oauthParameters;
      return [
        ['Token endpoint', `${o?.httpMethod ?? ''} ${o?.authorizationEndpoint ?? ''}`],
        ['Client id', o?.clientParameters?.clientId ?? ''],
        ['Client secret', stored],
        ['Scopes', (o?.scopes ?? []).join(' ')],
      ];
    }
    default:
      return [];
  }
}

export function ConnectionPage() {
  const name = useParams().name ?? '';
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const path = `/connections/${enc(name)}`;
  const query = useQuery({ queryKey: ['connections', 'one', name], queryFn: () => api<Connection>(path) });
  // The API destinations that use the connection (the first 500 of the account).
  const users = useQuery({
    queryKey: ['api-destinations', 'by-connection', name],
    queryFn: async () => {
      const d = await api<Schemas['ApiDestinationList']>('/api-destinations', { query: { limit: 500 } });
      return (d.apiDestinations ?? []).filter((a) => a.connection === name);
    },
  });
  return (
    <Stack>
      <Crumbs items={[['Connections', '/connections'], [name]]} />
      <Group justify="space-between">
        <Title order={1} size="h3">
          Connection {name} {query.data?.authorizationType && <Badge>{query.data.authorizationType}</Badge>}{' '}
          {query.data?.state && (
            <Badge color={query.data.state === 'DEAUTHORIZED' ? 'red' : 'green'} variant="light" data-testid="connection-state">
              {query.data.state}
            </Badge>
          )}
        </Title>
        {query.data && (
          <Group>
            <Button size="xs" variant="light" onClick={() => setEditing(true)}>
              {query.data.state === 'DEAUTHORIZED' ? 'Authorize again' : 'Edit'}
            </Button>
            {query.data.state !== 'DEAUTHORIZED' && (
              <ConfirmButton
                label="Deauthorize"
                color="orange"
                title="Deauthorize connection?"
                question={
                  <>
                    Deauthorize <b>{name}</b>? Its secrets are dropped, not kept aside. The targets of its API destinations
                    then send nothing and dead-letter every event, until you edit the connection and give the secrets again.
                  </>
                }
                run={() => api(`${path}/deauthorize`, { method: 'POST' })}
                onDone={() => {
                  toast(`Connection ${name} deauthorized`);
                  void qc.invalidateQueries({ queryKey: ['connections'] });
                }}
              />
            )}
            <ConfirmButton
              label="Delete"
              color="red"
              title="Delete connection?"
              question={
                <>
                  Delete the connection <b>{name}</b>? This cannot be undone.
                </>
              }
              run={() => api(path, { method: 'DELETE' })}
              onDone={() => {
                toast(`Connection ${name} deleted`);
                qc.invalidateQueries({ queryKey: ['connections'] });
                navigate('/connections');
              }}
            />
          </Group>
        )}
      </Group>
      <QueryState query={query}>
        {(c) => (
          <>
            <Fields
              rows={[
                ['Description', c.description],
                [
                  'State',
                  c.state === 'DEAUTHORIZED' ? (
                    <span key="s">
                      Deauthorized {c.deauthorizedAt && <RelativeTime value={c.deauthorizedAt} />}: its secrets were dropped and
                      its targets dead-letter every event; edit it with every secret to authorize it again.
                    </span>
                  ) : (
                    <span key="s">Authorized {c.authorizedAt && <RelativeTime value={c.authorizedAt} />}</span>
                  ),
                ],
                ...authRows(c).map(([k, v]): [string, string] => [k, c.state === 'DEAUTHORIZED' && v === 'stored (never shown)' ? 'dropped (deauthorized)' : v]),
                [
                  'Invocation parameters',
                  paramsToRows(c.authParameters?.invocationHttpParameters).length > 0 ? (
                    <List size="sm">
                      {paramsToRows(c.authParameters?.invocationHttpParameters).map((r, i) => (
                        <List.Item key={i}>
                          {r.place} <Code>{r.key}</Code> = {r.secret ? <i>secret (never shown)</i> : <Code>{r.value}</Code>}
                        </List.Item>
                      ))}
                    </List>
                  ) : undefined,
                ],
                ['Created', c.createdAt && <RelativeTime key="c" value={c.createdAt} />],
                ['Updated', c.updatedAt && <RelativeTime key="u" value={c.updatedAt} />],
              ]}
            />
            <Modal opened={editing} onClose={() => setEditing(false)} title={`Edit ${c.name}`} size="lg">
              <ConnectionFormView
                connection={c}
                onSaved={() => {
                  setEditing(false);
                  qc.invalidateQueries({ queryKey: ['connections'] });
                }}
              />
            </Modal>
          </>
        )}
      </QueryState>
      <Title order={2} size="h4">
        API destinations using it
      </Title>
      <QueryState query={users} isEmpty={(d) => d.length === 0} empty="No API destination uses this connection.">
        {(d) => (
          <List>
            {d.map((a) => (
              <List.Item key={a.name}>
                <Anchor component={Link} to={`/api-destinations/${enc(a.name ?? '')}`}>
                  {a.name}
                </Anchor>{' '}
                — {a.httpMethod} {a.invocationEndpoint}
              </List.Item>
            ))}
          </List>
        )}
      </QueryState>
    </Stack>
  );
}
