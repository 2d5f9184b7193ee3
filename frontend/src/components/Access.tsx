import { Alert, Button, Code, Group, Stack, Text, VisuallyHidden } from '@mantine/core';
import { useClipboard } from '@mantine/hooks';
import { useQuery, type UseQueryResult } from '@tanstack/react-query';
import { useSyncExternalStore, type ReactNode } from 'react';
import { api, type Me } from '../api/client';
import { roleIn } from '../api/me';
import { session, subscribe } from '../api/session';
import { isForbidden, noAccessText } from '../pages/roles';
import { QueryState } from './states';

/** Caller is who uses an access page: who they are, the account requests act in, and their role there. */
export interface Caller {
  me?: Me;
  account: string;
  role?: string;
  instanceAdmin: boolean;
  /** username is the signed-in user's login name (a password session), else undefined. */
  username?: string;
}

/** useCaller reads the caller from /me (shared with the header) and the account chosen in the header. */
export function useCaller(): Caller {
  const s = useSyncExternalStore(subscribe, session);
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<Me>('/me'), staleTime: 60_000 });
  const account = s.account ?? me.data?.account ?? '';
  return {
    me: me.data,
    account,
    role: me.data ? roleIn(me.data, account) : undefined,
    instanceAdmin: me.data?.instanceAdmin === true,
    username: s.credential?.kind === 'session' ? s.credential.username : undefined,
  };
}

/** NoAccess says that the caller's role may not use a page, instead of the API's 403 as an error. */
export function NoAccess({ what, caller }: { what: string; caller: Caller }) {
  return (
    <Alert color="yellow" title="Not available with your role" role="status" data-testid="no-access">
      {noAccessText(what, caller.account, caller.role)}
    </Alert>
  );
}

/** AccessState is QueryState for the access pages: a 403 answer says what the role may not do (NoAccess). */
export function AccessState<T>({
  query,
  what,
  caller,
  isEmpty,
  empty,
  children,
}: {
  query: UseQueryResult<T>;
  what: string;
  caller: Caller;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isError && isForbidden(query.error)) return <NoAccess what={what} caller={caller} />;
  return (
    <QueryState query={query} isEmpty={isEmpty} empty={empty}>
      {children}
    </QueryState>
  );
}

/**
 * Secret shows a value the server answers once (an API key, a secret access key) with a copy button
 * (navigator.clipboard); when the browser refuses to copy, it says to select the value and copy it by hand.
 */
export function Secret({ label, value, testId }: { label: string; value: string; testId: string }) {
  const clipboard = useClipboard({ timeout: 3000 });
  return (
    <Stack gap={4}>
      <Group justify="space-between" wrap="nowrap" gap="xs">
        <Text size="sm" fw={600}>
          {label}
        </Text>
        <Button size="xs" variant={clipboard.copied ? 'filled' : 'light'} color={clipboard.copied ? 'green' : undefined} onClick={() => clipboard.copy(value)}>
          {clipboard.copied ? 'Copied' : 'Copy'}
          <VisuallyHidden> {label}</VisuallyHidden>
        </Button>
      </Group>
      <Code block data-testid={testId} style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', userSelect: 'all' }}>
        {value}
      </Code>
      {clipboard.error && (
        <Alert color="red" role="alert" p="xs">
          This browser did not let the console copy: select the text above and copy it by hand.
        </Alert>
      )}
    </Stack>
  );
}
