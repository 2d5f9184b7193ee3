import { api, enc, type Schemas } from '../api/client';
import { ResourceList } from '../components/ResourceList';

type ApiDestination = Schemas['ApiDestination'];

export function ApiDestinationsPage() {
  return (
    <ResourceList<ApiDestination>
      title="API destinations"
      queryKey={['api-destinations']}
      load={async (nextToken) => {
        const d = await api<Schemas['ApiDestinationList']>('/api-destinations', { query: { nextToken, limit: 50 } });
        return { items: d.apiDestinations ?? [], nextToken: d.nextToken };
      }}
      nameOf={(a) => a.name ?? ''}
      columns={[
        { label: 'Name', render: (a) => a.name },
        { label: 'Connection', render: (a) => a.connection },
        { label: 'Endpoint', render: (a) => `${a.httpMethod ?? ''} ${a.invocationEndpoint ?? ''}` },
      ]}
      create={{
        run: (body) => api('/api-destinations', { body }),
        example: { name: 'crm-orders', connection: 'crm', invocationEndpoint: 'https://crm.example.com/orders', httpMethod: 'POST' },
      }}
      edit={{
        body: ({ createdAt: _c, updatedAt: _u, ...a }) => a,
        run: (a, body) => api(`/api-destinations/${enc(a.name ?? '')}`, { method: 'PUT', body }),
      }}
      remove={(a) => api(`/api-destinations/${enc(a.name ?? '')}`, { method: 'DELETE' })}
      emptyText="No API destinations yet."
    />
  );
}
