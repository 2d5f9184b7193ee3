import { Badge, Button, Group, Loader, Menu, Select, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { api, listAccounts, type Me } from '../api/client';
import { accountChoices, roleIn } from '../api/me';
import { errorText } from '../api/problem';
import { chooseAccount, type Session } from '../api/session';
import { endSession } from '../api/userSessions';

// The queries that do not depend on the chosen account: kept when it changes.
const identityKeys = new Set(['me', 'accounts']);

/**
 * Identity is the header's part about who is signed in: the user menu under the user's or key's name (how they
 * signed in, Account security for a user's session, Sign out), their role in the account requests act in, and
 * the account selector (every account for an instance administrator, else the memberships).
 */
export function Identity({ session }: { session: Session }) {
  const qc = useQueryClient();
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<Me>('/me'), staleTime: 60_000 });
  const accounts = useQuery({ queryKey: ['accounts'], queryFn: listAccounts, enabled: me.data?.instanceAdmin === true });
  // A session ends on the server before the console forgets it; when that fails the console stays signed in.
  const signOut = useMutation({ mutationFn: endSession, onSuccess: () => qc.clear() });
  const signOutError = signOut.error && (
    <Text size="sm" c="red" role="alert" data-testid="sign-out-error">
      Could not sign out: {errorText(signOut.error)}
    </Text>
  );

  const out = (
    <Button size="xs" variant="default" loading={signOut.isPending} onClick={() => signOut.mutate()}>
      Sign out
    </Button>
  );
  if (me.isPending) {
    return (
      <Group gap="sm">
        <Loader size="xs" aria-label="Loading who is signed in" />
        {signOutError}
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
        {signOutError}
        {out}
      </Group>
    );
  }

  const m = me.data;
  const current = session.account ?? m.account ?? '';
  const choices = accountChoices(m, accounts.data);
  if (current && !choices.includes(current)) choices.push(current);
  const role = roleIn(m, current);
  const bySession = session.credential?.kind === 'session';
  return (
    <Group gap="sm" wrap="nowrap" data-testid="identity">
      {signOutError}
      {m.instanceAdmin && (
        <Badge color="grape" variant="light" data-testid="instance-admin" visibleFrom="lg">
          instance administrator
        </Badge>
      )}
      {role && (
        <Badge variant="outline" title={`Role in ${current}`} data-testid="identity-role" visibleFrom="sm">
          {role}
        </Badge>
      )}
      <Select
        size="xs"
        w={{ base: 130, sm: 170 }}
        aria-label="Account"
        leftSection={<Text size="xs">acct</Text>}
        data={choices}
        value={current}
        allowDeselect={false}
        searchable={choices.length > 8}
        nothingFoundMessage="No such account"
        onChange={(v) => {
          if (!v || v === current) return;
          // The credential's own account is what requests without X-Account-Id act in: no header for it.
          chooseAccount(v === m.account ? undefined : v);
          // What was read in the other account must not show under this one while it reloads.
          qc.resetQueries({ predicate: (q) => !identityKeys.has(String(q.queryKey[0])) });
        }}
      />
      <Menu position="bottom-end" shadow="md" width={260}>
        <Menu.Target>
          <Button size="xs" variant="subtle" color="dark" loading={signOut.isPending} data-testid="user-menu" rightSection="▾">
            <Text size="sm" fw={500} data-testid="identity-name">
              {m.name}
            </Text>
          </Button>
        </Menu.Target>
        <Menu.Dropdown>
          <Menu.Label data-testid="signed-in-as">
            {bySession ? `User ${m.name}, signed in with a password` : `${m.kind === 'user' ? 'User' : 'API key'} ${m.name} (${m.id}), signed in with an API key`}
          </Menu.Label>
          {bySession && (
            <Menu.Item component={Link} to="/account/security">
              Account security
            </Menu.Item>
          )}
          <Menu.Item onClick={() => signOut.mutate()}>Sign out</Menu.Item>
        </Menu.Dropdown>
      </Menu>
    </Group>
  );
}
