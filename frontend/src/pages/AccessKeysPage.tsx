import { Alert, Button, Code, Group, Modal, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { createAccessKey, listAccessKeys, revokeAccessKey, type AccessKey } from '../api/access';
import { AccessState, Secret, useCaller } from '../components/Access';
import { ConfirmButton } from '../components/Detail';
import { KeyCreateForm } from '../components/KeyForm';
import { RelativeTime, useNow } from '../components/Time';
import { exactTime } from '../format';
import { accessKeyBody, expiryText, keySummary } from './keys';
import { toast } from '../components/toast';

/**
 * AccessKeysPage (/access/access-keys) lists the AWS-style access keys of the account requests act in (for the
 * Amazon EventBridge API's clients: the aws CLI, the AWS SDKs, Terraform), creates one (name, role, expiry) and
 * shows its secret access key once with a copy button, and revokes one after a confirmation. The account's
 * administrators only (access.manage); other roles are told so.
 */
export function AccessKeysPage() {
  const caller = useCaller();
  const qc = useQueryClient();
  const key = ['access-keys', caller.account];
  const list = useQuery({ queryKey: key, queryFn: listAccessKeys });
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<AccessKey>();
  const refresh = () => qc.invalidateQueries({ queryKey: key });
  const origin = window.location.origin;

  return (
    <Stack maw={1200}>
      <Group justify="space-between">
        <Title order={1} size="h3">
          AWS access keys
        </Title>
        <Group gap="xs">
          <Button variant="default" onClick={refresh} loading={list.isFetching && !list.isPending}>
            Refresh
          </Button>
          <Button onClick={() => setCreating(true)}>Create access key</Button>
        </Group>
      </Group>
      <Text size="sm">
        Clients of the Amazon EventBridge API (the aws CLI, the AWS SDKs, Terraform) sign their requests to account{' '}
        <b>{caller.account}</b> with an access key ID and its secret access key. Each key has one role here and may
        expire. The secret is shown once, when the key is created.
      </Text>
      <AccessState
        query={list}
        what="access keys"
        caller={caller}
        isEmpty={(d) => d.items.length === 0}
        empty="No access keys. Create one for each AWS client (a CI job, a Terraform workspace), with the least role it needs."
      >
        {(d) => (
          <>
            <Table.ScrollContainer type="native" minWidth={820} pos="relative" aria-label="Access keys">
              <Table data-testid="access-keys" verticalSpacing="xs">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Access key ID</Table.Th>
                    <Table.Th>Role</Table.Th>
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
                    <KeyRow key={k.accessKeyId} k={k} onRevoked={refresh} />
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
            {d.truncated && <Text size="sm">Only the first 10,000 keys are listed.</Text>}
          </>
        )}
      </AccessState>

      <Modal opened={creating} onClose={() => setCreating(false)} title={`Create an access key in account ${caller.account}`} size="lg">
        <KeyCreateForm
          kind="accessKey"
          account={caller.account}
          send={(f, now) => createAccessKey(accessKeyBody(f, now))}
          onCreated={(k) => {
            toast(`Access key ${k.name} created`);
            setCreating(false);
            setCreated(k);
            void refresh();
          }}
          onCancel={() => setCreating(false)}
        />
      </Modal>

      <Modal opened={created !== undefined} onClose={() => setCreated(undefined)} title="Copy the secret access key now" size="lg" closeOnClickOutside={false}>
        {created && (
          <Stack gap="sm" data-testid="new-access-key">
            <Alert color="yellow" title="You will not see it again">
              This is the only time the secret access key is shown. Store it with the client that signs with it (aws
              configure, a secret of your CI). Lost, it cannot be recovered: create another key and revoke this one.
            </Alert>
            <Text size="sm">{keySummary(created, exactTime)}</Text>
            <Secret label="Access key ID" value={created.accessKeyId ?? ''} testId="new-access-key-id" />
            <Secret label="Secret access key" value={created.secretAccessKey ?? ''} testId="new-secret" />
            <Text size="sm">
              Use them with the aws CLI: <Code>AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=… aws --endpoint-url {origin} events list-event-buses</Code>
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

function KeyRow({ k, onRevoked }: { k: AccessKey; onRevoked: () => void }) {
  const now = useNow();
  const expired = k.expiresAt !== undefined && Date.parse(k.expiresAt) <= now.getTime();
  return (
    <Table.Tr data-testid={`access-key-${k.accessKeyId}`} data-name={k.name}>
      <Table.Td>
        <Text size="sm" fw={500}>
          {k.name}
        </Text>
      </Table.Td>
      <Table.Td>
        <Code>{k.accessKeyId}</Code>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{k.role}</Text>
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
          title={`Revoke access key ${k.name}?`}
          question={`Clients that sign with ${k.accessKeyId} can no longer call the Amazon EventBridge API, within a second on every replica. This cannot be undone.`}
          color="red"
          run={() => revokeAccessKey(k.accessKeyId ?? '')}
          onDone={() => {
            toast(`Access key ${k.name} revoked`);
            onRevoked();
          }}
        />
      </Table.Td>
    </Table.Tr>
  );
}
