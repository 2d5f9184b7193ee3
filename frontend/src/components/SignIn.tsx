import { Alert, Anchor, Button, Center, Code, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { checkApiKey } from '../api/client';
import { signInError } from '../api/me';
import { chooseMethod, signInWithKey, signInWithSession, type SignInMethod } from '../api/session';
import { createSession, passwordSignInError } from '../api/userSessions';

/**
 * SignIn is shown instead of the console while nobody is signed in. A user signs in with their name and password
 * (a session cookie, docs/identity.md "Sessions"); an API key is the alternative, behind a link. Either is kept
 * only after the server accepted it.
 */
export function SignIn({ notice, method }: { notice?: string; method: SignInMethod }) {
  return (
    <Center mih="100vh" p="md">
      {method === 'password' ? <PasswordSignIn notice={notice} /> : <KeySignIn notice={notice} />}
    </Center>
  );
}

function Frame({ onSubmit, notice, error, children }: { onSubmit: (e: FormEvent) => void; notice?: string; error?: string; children: ReactNode }) {
  return (
    <Paper withBorder p={{ base: 'md', xs: 'xl' }} w="100%" maw={440} component="form" onSubmit={onSubmit} aria-labelledby="sign-in-title" noValidate>
      <Stack>
        <Title order={1} size="h3" id="sign-in-title">
          Sign in to the EventBridge console
        </Title>
        {notice && !error && (
          <Alert color="yellow" role="status" data-testid="sign-in-notice">
            {notice}
          </Alert>
        )}
        {children}
      </Stack>
    </Paper>
  );
}

function ErrorText({ error }: { error?: string }) {
  if (!error) return null;
  return (
    <Alert color="red" role="alert" id="sign-in-error" data-testid="sign-in-error">
      {error}
    </Alert>
  );
}

function PasswordSignIn({ notice }: { notice?: string }) {
  const qc = useQueryClient();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [checking, setChecking] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const name = username.trim();
    if (name === '' || password === '') return setError('Enter your user name and password.');
    setChecking(true);
    setError(undefined);
    try {
      const s = await createSession(name, password);
      // Nothing read as someone else may show: start from an empty cache.
      qc.clear();
      signInWithSession(s.username ?? name, s.csrfToken);
    } catch (err) {
      setError(passwordSignInError(err));
      setChecking(false);
    }
  }

  const described = error ? 'sign-in-error' : undefined;
  return (
    <Frame onSubmit={submit} notice={notice} error={error}>
      <TextInput
        label="User name"
        autoComplete="username"
        autoCapitalize="none"
        spellCheck={false}
        autoFocus
        data-autofocus
        value={username}
        onChange={(e) => setUsername(e.currentTarget.value)}
        error={error ? true : undefined}
        aria-describedby={described}
      />
      <PasswordInput
        label="Password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
        error={error ? true : undefined}
        aria-describedby={described}
      />
      <ErrorText error={error} />
      <Button type="submit" loading={checking}>
        Sign in
      </Button>
      <Text size="sm" c="dimmed">
        On a fresh install the password of the user <Code>admin</Code> is in the data directory:{' '}
        <Code>cat data/admin-password</Code>.
      </Text>
      <Anchor component="button" type="button" size="sm" onClick={() => chooseMethod('apiKey')}>
        Sign in with an API key instead
      </Anchor>
    </Frame>
  );
}

function KeySignIn({ notice }: { notice?: string }) {
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
      // Nothing read with another credential may show: start from an empty cache, with who we are already known.
      qc.clear();
      qc.setQueryData(['me'], me);
      signInWithKey(k);
    } catch (err) {
      setError(signInError(err));
      setChecking(false);
    }
  }

  return (
    <Frame onSubmit={submit} notice={notice} error={error}>
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
      <ErrorText error={error} />
      <Button type="submit" loading={checking}>
        Sign in
      </Button>
      <Text size="sm" c="dimmed">
        Every request sends the key as a bearer token; it is kept in this tab only. On a fresh install the instance
        administrator’s key is in the data directory: <Code>cat data/admin-api-key</Code>.
      </Text>
      <Anchor component="button" type="button" size="sm" onClick={() => chooseMethod('password')}>
        Sign in with a user name and password
      </Anchor>
    </Frame>
  );
}
