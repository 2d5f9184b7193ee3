import { Anchor } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ApiDestinationFormView } from '../components/ResourceForms';
import { ResourceList } from '../components/ResourceList';

type ApiDestination = Schemas['ApiDestination'];

export function ApiDestinationsPage() {
  return (
    <ResourceList<ApiDestination>
      title="API destinations"
      noun="API destination"
      queryKey={['api-destinations']}
      load={async (nextToken) => {
        const d = await api<Schemas['ApiDestinationList']>('/api-destinations', { query: { nextToken, limit: 50 } });
        return { items: d.apiDestinations ?? [], nextToken: d.nextToken };
      }}
      nameOf={(a) => a.name ?? ''}
      columns={[
        { label: 'Name', render: (a) => <Anchor component={Link} to={`/api-destinations/${enc(a.name ?? '')}`}>{a.name}</Anchor> },
        {
          label: 'Connection',
          render: (a) => (a.connection ? <Anchor component={Link} to={`/connections/${enc(a.connection)}`}>{a.connection}</Anchor> : null),
        },
        { label: 'Endpoint', render: (a) => `${a.httpMethod ?? ''} ${a.invocationEndpoint ?? ''}` },
      ]}
      form={(a, done) => <ApiDestinationFormView destination={a} onSaved={done} />}
      formCreate
      remove={(a) => api(`/api-destinations/${enc(a.name ?? '')}`, { method: 'DELETE' })}
      emptyText="No API destinations yet. An API destination is an HTTP endpoint, with a connection and a rate limit, that targets deliver to."
    />
  );
}
