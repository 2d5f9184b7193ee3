import { Alert, Badge, Button, Code, Group, Modal, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { createApiKey, listApiKeys, revokeApiKey, type ApiKey } from '../api/access';
import { api, type Schemas } from '../api/client';
import { AccessState, Secret, useCaller } from '../components/Access';
import { ConfirmButton } from '../components/Detail';
import { KeyCreateForm } from '../components/KeyForm';
import { RelativeTime, useNow } from '../components/Time';
import { exactTime } from '../format';
import { apiKeyBody, busesText, expiryText, keySummary } from './keys';
import { toast } from '../components/toast';

/**
 * ApiKeysPage (/access/api-keys) lists the API keys of the account requests act in, creates one (name, role,
 * expiry, buses) and shows its secret once with a copy button, and revokes one after a confirmation. The account's
 * administrators only (access.manage); other roles are told so.
 */
export function ApiKeysPage() {
  const caller = useCaller();
  const qc = useQueryClient();
  const key = ['api-keys', caller.account];
  const list = useQuery({ queryKey: key, queryFn: listApiKeys });
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<ApiKey>();
  const buses = useQuery({
    queryKey: ['buses', 'all'],
    queryFn: () => api<Schemas['BusList']>('/buses', { query: { limit: 500 } }),
    enabled: creating,
  });
  const refresh = () => qc.invalidateQueries({ queryKey: key });

  return (
    <Stack maw={1200}>
      <Group justify="space-between">
        <Title order={1} size="h3">
          API keys
        </Title>
        <Group gap="xs">
          <Button variant="default" onClick={refresh} loading={list.isFetching && !list.isPending}>
            Refresh
          </Button>
          <Button onClick={() => setCreating(true)}>Create API key</Button>
        </Group>
      </Group>
      <Text size="sm">
        Programs call the API of account <b>{caller.account}</b> with an API key, sent as <Code>Authorization: Bearer &lt;key&gt;</Code>. Each
        key has one role here, may expire, and a key that puts events may be limited to some buses. Its secret is shown
        once, when it is created.
      </Text>
      <AccessState
        query={list}
        what="API keys"
        caller={caller}
        isEmpty={(d) => d.items.length === 0}
        empty="No API keys. Create one for each program that calls the API, with the least role it needs."
      >
        {(d) => (
          <>
            <Table.ScrollContainer type="native" minWidth={900} pos="relative" aria-label="API keys">
              <Table data-testid="api-keys" verticalSpacing="xs">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Key</Table.Th>
                    <Table.Th>Role</Table.Th>
                    <Table.Th>Buses</Table.Th>
                    <Table.Th>Expires</Table.Th>
                    <Table.Th>Last used</Table.Th>
                    <Table.Th>Created</Table.Th>
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {d.items.map((k) => (
                    <KeyRow key={k.id} k={k} onRevoked={refresh} />
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
            {d.truncated && <Text size="sm">Only the first 10,000 keys are listed.</Text>}
          </>
        )}
      </AccessState>

      <Modal opened={creating} onClose={() => setCreating(false)} title={`Create an API key in account ${caller.account}`} size="lg">
        <KeyCreateForm
          kind="apiKey"
          account={caller.account}
          offerInstanceAdmin={caller.instanceAdmin}
          busNames={(buses.data?.buses ?? []).map((b) => b.name ?? '').filter((n) => n !== '')}
          send={(f, now) => createApiKey(apiKeyBody(f, now))}
          onCreated={(k) => {
            toast(`API key ${k.name} created`);
            setCreating(false);
            setCreated(k);
            void refresh();
          }}
          onCancel={() => setCreating(false)}
        />
      </Modal>

      <Modal opened={created !== undefined} onClose={() => setCreated(undefined)} title="Copy the API key now" size="lg" closeOnClickOutside={false}>
        {created && (
          <Stack gap="sm" data-testid="new-api-key">
            <Alert color="yellow" title="You will not see it again">
              This is the only time the key is shown: the server keeps only a hash of it. Store it where the program
              reads it (a secret of your orchestrator, a password manager). Lost, it cannot be recovered: create
              another one and revoke this one.
            </Alert>
            <Text size="sm">{keySummary(created, exactTime)}</Text>
            <Secret label="API key" value={created.secret ?? ''} testId="new-secret" />
            <Text size="sm">
              Try it: <Code>curl -H "Authorization: Bearer $EB_API_KEY" {window.location.origin}/api/v1/me</Code>
            </Text>
            <Group justify="flex-end">
              <Button onClick={() => setCreated(undefined)}>I have stored the key</Button>
            </Group>
          </Stack>
        )}
      </Modal>
    </Stack>
  );
}

function KeyRow({ k, onRevoked }: { k: ApiKey; onRevoked: () => void }) {
  const now = useNow();
  const expired = k.expiresAt !== undefined && Date.parse(k.expiresAt) <= now.getTime();
  return (
    <Table.Tr data-testid={`api-key-${k.id}`} data-name={k.name}>
      <Table.Td>
        <Text size="sm" fw={500}>
          {k.name}
        </Text>
      </Table.Td>
      <Table.Td>
        <Code>{k.prefix}</Code>
      </Table.Td>
      <Table.Td>
        <Group gap={4} wrap="nowrap">
          <Text size="sm">{k.role}</Text>
          {k.instanceAdmin && (
            <Badge size="sm" color="grape" variant="light">
              instance administrator
            </Badge>
          )}
        </Group>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{busesText(k)}</Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm" title={k.expiresAt ? exactTime(k.expiresAt) : undefined} fw={expired ? 600 : undefined}>
          {expiryText(k.expiresAt, now)}
        </Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{k.lastUsedAt ? <RelativeTime value={k.lastUsedAt} /> : 'Never'}</Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm" title={k.createdBy ? `by ${k.createdBy}` : undefined}>
          <RelativeTime value={k.createdAt} />
        </Text>
      </Table.Td>
      <Table.Td>
        <ConfirmButton
          label="Revoke"
          title={`Revoke API key ${k.name}?`}
          question={`Programs that use ${k.prefix}… can no longer call the API, within a second on every replica. This cannot be undone.`}
          color="red"
          run={() => revokeApiKey(k.id ?? '')}
          onDone={() => {
            toast(`API key ${k.name} revoked`);
            onRevoked();
          }}
        />
      </Table.Td>
    </Table.Tr>
  );
}
