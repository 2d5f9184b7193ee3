import { api, enc, type Schemas } from '../api/client';
import { ResourceList } from '../components/ResourceList';

type Connection = Schemas['Connection'];

// The API never answers secret values; the list shows the authorization type only.
export function ConnectionsPage() {
  return (
    <ResourceList<Connection>
      title="Connections"
      queryKey={['connections']}
      load={async (nextToken) => {
        const d = await api<Schemas['ConnectionList']>('/connections', { query: { nextToken, limit: 50 } });
        return { items: d.connections ?? [], nextToken: d.nextToken };
      }}
      nameOf={(c) => c.name ?? ''}
      columns={[
        { label: 'Name', render: (c) => c.name },
        { label: 'Authorization', render: (c) => c.authorizationType },
        { label: 'Description', render: (c) => c.description },
      ]}
      create={{
        run: (body) => api('/connections', { body }),
        example: { name: 'crm', authorizationType: 'API_KEY', authParameters: { apiKeyAuthParameters: { apiKeyName: 'X-Api-Key', apiKeyValue: 'secret' } } },
      }}
      edit={{
        // Secret values are never answered: a replacement must give them again.
        body: ({ createdAt: _c, updatedAt: _u, ...c }) => c,
        run: (c, body) => api(`/connections/${enc(c.name ?? '')}`, { method: 'PUT', body }),
      }}
      remove={(c) => api(`/connections/${enc(c.name ?? '')}`, { method: 'DELETE' })}
      emptyText="No connections yet."
    />
  );
}
