import { Anchor } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, enc, type Bus, type Schemas } from '../api/client';
import { BusFormView } from '../components/ResourceForms';
import { ResourceList } from '../components/ResourceList';
import { RelativeTime } from '../components/Time';
import { retentionText } from '../format';

export function BusesPage() {
  return (
    <ResourceList<Bus>
      title="Buses"
      noun="bus"
      queryKey={['buses']}
      load={async (nextToken) => {
        const d = await api<Schemas['BusList']>('/buses', { query: { nextToken, limit: 50 } });
        return { items: d.buses ?? [], nextToken: d.nextToken };
      }}
      nameOf={(b) => b.name ?? ''}
      columns={[
        { label: 'Name', render: (b) => <Anchor component={Link} to={`/buses/${enc(b.name ?? '')}`}>{b.name}</Anchor> },
        { label: 'Description', render: (b) => b.description },
        {
          label: 'Retention',
          render: (b) => (
            <span title={[b.retention?.maxAge, b.retention?.maxBytes ? `${b.retention.maxBytes} bytes` : ''].filter(Boolean).join(', ')}>{retentionText(b.retention)}</span>
          ),
        },
        { label: 'Created', render: (b) => <RelativeTime value={b.createdAt} /> },
      ]}
      form={(b, done) => <BusFormView bus={b} onSaved={done} />}
      formCreate
      remove={(b) => api(`/buses/${enc(b.name ?? '')}`, { method: 'DELETE' })}
      emptyText="No buses yet. A bus receives events and hands them to the rules that match: create one, or drop a bus in the builder."
    />
  );
}
