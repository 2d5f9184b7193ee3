import { Alert, Button, Center, Code, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { checkApiKey } from '../api/client';
import { signInError } from '../api/me';
import { signIn } from '../api/session';

/**
 * SignIn is shown instead of the console while there is no API key or the server refused it. A key is stored only
 * after GET /api/v1/me accepted it. (Users with passwords and console sessions come later.)
 */
export function SignIn({ notice }: { notice?: string }) {
  const qc = useQueryClient();
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [checking, setChecking] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const k = key.trim();
    if (k === '') return setError('Enter an API key.');
    // fetch refuses header values outside ISO-8859-1 with a TypeError that would read like a network error.
    if (!/^[\x21-\x7e]+$/.test(k)) return setError('An API key has no spaces or special characters: it reads ebk_<id>_<secret>.');
    setChecking(true);
    setError(undefined);
    try {
      const me = await checkApiKey(k);
      // Nothing read with another key may show: start from an empty cache, with who we are already known.
      qc.clear();
      qc.setQueryData(['me'], me);
      signIn(k);
    } catch (err) {
      setError(signInError(err));
      setChecking(false);
    }
  }

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" w={440} component="form" onSubmit={submit} aria-labelledby="sign-in-title">
        <Stack>
          <Title order={3} id="sign-in-title">
            Sign in to the EventBridge console
          </Title>
          {notice && !error && (
            <Alert color="yellow" role="status" data-testid="sign-in-notice">
              {notice}
            </Alert>
          )}
          <PasswordInput
            label="API key"
            placeholder="ebk_…"
            autoComplete="off"
            spellCheck={false}
            autoFocus
            data-autofocus
            value={key}
            onChange={(e) => setKey(e.currentTarget.value)}
            error={error ? true : undefined}
            aria-describedby={error ? 'sign-in-error' : undefined}
          />
          {error && (
            <Alert color="red" role="alert" id="sign-in-error" data-testid="sign-in-error">
              {error}
            </Alert>
          )}
          <Button type="submit" loading={checking}>
            Sign in
          </Button>
          <Text size="sm" c="dimmed">
            On a fresh install the instance administrator's key is in the data directory: <Code>cat data/admin-api-key</Code>.
          </Text>
        </Stack>
      </Paper>
    </Center>
  );
}
