import { Badge, Button, Group, Loader, Select, Text, Tooltip } from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, listAccounts, type Me } from '../api/client';
import { accountChoices, roleIn } from '../api/me';
import { errorText } from '../api/problem';
import { chooseAccount, signOut, type Session } from '../api/session';

// The queries that do not depend on the chosen account: kept when it changes.
const identityKeys = new Set(['me', 'accounts']);

/**
 * Identity is the header's part about who is signed in: the key's name, its role in the account requests act in,
 * the account selector (every account for an instance administrator, else the key's memberships) and Sign out.
 */
export function Identity({ session }: { session: Session }) {
  const qc = useQueryClient();
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<Me>('/me'), staleTime: 60_000 });
  const accounts = useQuery({ queryKey: ['accounts'], queryFn: listAccounts, enabled: me.data?.instanceAdmin === true });

  const out = (
    <Button
      size="xs"
      variant="default"
      onClick={() => {
        signOut('You signed out.');
        qc.clear();
      }}
    >
      Sign out
    </Button>
  );
  if (me.isPending) {
    return (
      <Group gap="sm">
        <Loader size="xs" aria-label="Loading who is signed in" />
        {out}
      </Group>
    );
  }
  if (me.isError) {
    return (
      <Group gap="sm">
        <Text size="sm" c="red" role="alert">
          {errorText(me.error)}
        </Text>
        {out}
      </Group>
    );
  }

  const m = me.data;
  const current = session.account ?? m.account ?? '';
  const choices = accountChoices(m, accounts.data);
  if (current && !choices.includes(current)) choices.push(current);
  const role = roleIn(m, current);
  return (
    <Group gap="sm" data-testid="identity">
      <Tooltip label={`${m.kind === 'user' ? 'User' : 'API key'} ${m.name} (${m.id})`}>
        <Text size="sm" fw={500} data-testid="identity-name">
          {m.name}
        </Text>
      </Tooltip>
      {m.instanceAdmin && (
        <Badge color="grape" variant="light" data-testid="instance-admin">
          instance administrator
        </Badge>
      )}
      {role && (
        <Badge variant="outline" title={`Role in ${current}`} data-testid="identity-role">
          {role}
        </Badge>
      )}
      <Select
        size="xs"
        w={170}
        aria-label="Account"
        leftSection={<Text size="xs">acct</Text>}
        data={choices}
        value={current}
        allowDeselect={false}
        searchable={choices.length > 8}
        nothingFoundMessage="No such account"
        onChange={(v) => {
          if (!v || v === current) return;
          // The key's own account is what requests without X-Account-Id act in: no header for it.
          chooseAccount(v === m.account ? undefined : v);
          // What was read in the other account must not show under this one while it reloads.
          qc.resetQueries({ predicate: (q) => !identityKeys.has(String(q.queryKey[0])) });
        }}
      />
      {out}
    </Group>
  );
}
