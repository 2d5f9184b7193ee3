import { Anchor, Badge } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ConnectionFormView } from '../components/ResourceForms';
import { ResourceList } from '../components/ResourceList';

type Connection = Schemas['Connection'];

// The API never answers secret values; the list shows the authorization type only.
export function ConnectionsPage() {
  return (
    <ResourceList<Connection>
      title="Connections"
      noun="connection"
      queryKey={['connections']}
      load={async (nextToken) => {
        const d = await api<Schemas['ConnectionList']>('/connections', { query: { nextToken, limit: 50 } });
        return { items: d.connections ?? [], nextToken: d.nextToken };
      }}
      nameOf={(c) => c.name ?? ''}
      columns={[
        { label: 'Name', render: (c) => <Anchor component={Link} to={`/connections/${enc(c.name ?? '')}`}>{c.name}</Anchor> },
        { label: 'Authorization', render: (c) => c.authorizationType },
        { label: 'State', render: (c) => (c.state === 'DEAUTHORIZED' ? <Badge color="red" variant="light">DEAUTHORIZED</Badge> : c.state) },
        { label: 'Description', render: (c) => c.description },
      ]}
      form={(c, done) => <ConnectionFormView connection={c} onSaved={done} />}
      formCreate
      remove={(c) => api(`/connections/${enc(c.name ?? '')}`, { method: 'DELETE' })}
      emptyText="No connections yet. A connection holds the authorization (basic, API key or OAuth) that API destinations send with their requests."
    />
  );
}
