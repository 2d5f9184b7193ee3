import { Alert, Badge, Button, Group, Paper, PasswordInput, Stack, Table, Text, Title, Tooltip } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { UserSession } from '../api/client';
import type { Session } from '../api/session';
import {
  changePassword,
  checkPasswordChange,
  listSessions,
  MinPasswordLength,
  passwordChangeError,
  revokeSession,
  type PasswordChangeErrors,
} from '../api/userSessions';
import { ConfirmButton } from '../components/Detail';
import { ErrorAlert, QueryState } from '../components/states';
import { RelativeTime, useNow } from '../components/Time';
import { exactTime, relativeTime } from '../format';
import { browserOf, endsAt } from './sessions';

/**
 * SecurityPage (/account/security) is a signed-in user's own security: their live sessions, in every browser, each
 * of which they can end, and the change of their password, which ends every session. Someone signed in with an
 * API key has neither; the page says so.
 */
export function SecurityPage({ session }: { session: Session }) {
  if (session.credential?.kind !== 'session') {
    return (
      <Stack>
        <Title order={1} size="h3">
          Account security
        </Title>
        <Text>
          You signed in with an API key, which has no sessions or password. Sign in with a user name and password to
          see your sessions and change your password.
        </Text>
      </Stack>
    );
  }
  return (
    <Stack maw={1100}>
      <Title order={1} size="h3">
        Account security
      </Title>
      <Text c="dimmed" size="sm">
        Signed in as <b>{session.credential.username}</b> with a password.
      </Text>
      <Sessions />
      <PasswordForm />
    </Stack>
  );
}

const sessionsKey = ['me', 'sessions'];

function Sessions() {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: sessionsKey, queryFn: listSessions });
  const revoke = useMutation({
    mutationFn: revokeSession,
    onSuccess: (_, s) => {
      if (s.current) qc.clear(); // signed out: nothing read may outlive it
      else void qc.invalidateQueries({ queryKey: sessionsKey });
    },
  });
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Title order={2} size="h4">
          Your sessions
        </Title>
        <Button size="xs" variant="default" onClick={() => qc.invalidateQueries({ queryKey: sessionsKey })}>
          Refresh
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        Every browser where you are signed in. A session ends when it has not been used for a while, some hours after
        sign-in whatever its use, when you sign out there, when you end it here, and when your password changes.
      </Text>
      <ErrorAlert error={revoke.error} title="Could not end the session" />
      <QueryState query={list} isEmpty={(d) => d.length === 0} empty="No live sessions.">
        {(sessions) => (
          <Table.ScrollContainer type="native" minWidth={720} aria-label="Your sessions">
            <Table data-testid="sessions">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Browser</Table.Th>
                  <Table.Th>Address</Table.Th>
                  <Table.Th>Signed in</Table.Th>
                  <Table.Th>Last seen</Table.Th>
                  <Table.Th>Ends unless used</Table.Th>
                  <Table.Th />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {sessions.map((s) => (
                  <SessionRow key={s.id} s={s} revoke={() => revoke.mutateAsync(s)} revoking={revoke.isPending && revoke.variables?.id === s.id} />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryState>
    </Stack>
  );
}

function SessionRow({ s, revoke, revoking }: { s: UserSession; revoke: () => Promise<void>; revoking: boolean }) {
  const now = useNow();
  return (
    <Table.Tr data-testid={`session-${s.id}`} data-current={s.current ? 'true' : undefined}>
      <Table.Td>
        <Group gap="xs" wrap="nowrap">
          <Tooltip label={s.userAgent || 'no User-Agent'} multiline maw={420}>
            <Text size="sm" data-testid="session-browser">
              {browserOf(s.userAgent)}
            </Text>
          </Tooltip>
          {s.current && (
            <Badge size="sm" color="green" variant="light" data-testid="session-current">
              This browser
            </Badge>
          )}
        </Group>
      </Table.Td>
      <Table.Td>
        <Text size="sm" data-testid="session-address">
          {s.clientAddress || 'Unknown'}
        </Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm">
          <RelativeTime value={s.createdAt} />
        </Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm">
          <RelativeTime value={s.lastSeenAt} />
        </Text>
      </Table.Td>
      <Table.Td>
        <Text size="sm" title={`Idle end ${exactTime(s.idleExpiresAt) || 'unknown'}; absolute end ${exactTime(s.expiresAt) || 'unknown'}`}>
          {relativeTime(endsAt(s), now)}
        </Text>
      </Table.Td>
      <Table.Td>
        {s.current ? (
          <ConfirmButton
            label="End (signs you out)"
            title="End this browser’s session"
            question="This is the session of this browser: ending it signs you out here."
            color="red"
            run={revoke}
          />
        ) : (
          <Button size="xs" variant="light" color="red" loading={revoking} onClick={() => revoke().catch(() => {})}>
            End
          </Button>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

function PasswordForm() {
  const qc = useQueryClient();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [errors, setErrors] = useState<PasswordChangeErrors>({});
  const change = useMutation({
    mutationFn: () => changePassword(current, next),
    // Every session ended, this one too: the console is signed out; nothing read may outlive it.
    onSuccess: () => qc.clear(),
    onError: (err) => setErrors(passwordChangeError(err)),
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const errs = checkPasswordChange(current, next, repeat);
    setErrors(errs);
    if (Object.keys(errs).length === 0) change.mutate();
  }

  return (
    <Paper withBorder p="md" maw={440} component="form" onSubmit={submit} aria-labelledby="password-title" noValidate>
      <Stack gap="sm">
        <Title order={2} size="h4" id="password-title">
          Change your password
        </Title>
        <Text size="sm" c="dimmed">
          Every session of yours ends, this one too: sign in again with the new password afterwards.
        </Text>
        <PasswordInput
          label="Current password"
          autoComplete="current-password"
          value={current}
          onChange={(e) => setCurrent(e.currentTarget.value)}
          error={errors.currentPassword}
        />
        <PasswordInput
          label="New password"
          description={`At least ${MinPasswordLength} characters.`}
          autoComplete="new-password"
          value={next}
          onChange={(e) => setNext(e.currentTarget.value)}
          error={errors.newPassword}
        />
        <PasswordInput
          label="Repeat the new password"
          autoComplete="new-password"
          value={repeat}
          onChange={(e) => setRepeat(e.currentTarget.value)}
          error={errors.repeat}
        />
        {errors.form && (
          <Alert color="red" role="alert">
            {errors.form}
          </Alert>
        )}
        <Group>
          <Button type="submit" loading={change.isPending}>
            Change password
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
