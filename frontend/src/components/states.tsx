import { Alert, Center, Loader, Text } from '@mantine/core';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { errorText } from '../api/problem';

/** ErrorAlert shows an API error in plain words. */
export function ErrorAlert({ error, title = 'It did not work' }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <Alert color="red" title={title} role="alert" my="sm">
      {errorText(error)}
    </Alert>
  );
}

/** QueryState renders a query's loading and error states, the empty state when isEmpty says so, or children. */
export function QueryState<T>({
  query,
  isEmpty,
  empty,
  children,
}: {
  query: UseQueryResult<T>;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) {
    return (
      <Center p="lg">
        <Loader size="sm" aria-label="Loading" />
      </Center>
    );
  }
  if (query.isError) return <ErrorAlert error={query.error} title="Could not load" />;
  if (isEmpty?.(query.data)) {
    return (
      <Text c="dimmed" p="md" data-testid="empty">
        {empty ?? 'Nothing here yet.'}
      </Text>
    );
  }
  return <>{children(query.data)}</>;
}
