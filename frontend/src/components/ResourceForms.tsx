import { ActionIcon, Button, Checkbox, Group, NumberInput, PasswordInput, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { api, enc, type Schemas } from '../api/client';
import {
  apiDestinationBody,
  apiDestinationToForm,
  authorizationTypes,
  busCreateBody,
  busPatchBody,
  busToForm,
  connectionBody,
  connectionToForm,
  httpMethods,
  validateApiDestination,
  validateBus,
  validateConnection,
  type ApiDestination,
  type ApiDestinationForm,
  type AuthorizationType,
  type Bus,
  type BusForm,
  type Connection,
  type ConnectionForm,
  type FormErrors,
  type ParamPlace,
} from '../forms/resourceForms';
import { ErrorAlert } from './states';
import { toast } from './toast';

/** useForm keeps form values and the errors shown once the user tried to save. */
function useFormState<F>(initial: F, validate: (f: F) => FormErrors) {
  const [values, setValues] = useState(initial);
  const [tried, setTried] = useState(false);
  const errors = tried ? validate(values) : {};
  const set = <K extends keyof F>(k: K, v: F[K]) => setValues((f) => ({ ...f, [k]: v }));
  return { values, set, setValues, errors, tried, setTried };
}

function SaveBar({ creating, pending, onSave, error, extra }: { creating: boolean; pending: boolean; onSave: () => void; error: unknown; extra?: ReactNode }) {
  return (
    <>
      <ErrorAlert error={error} />
      <Group justify="flex-end" mt="sm">
        {extra}
        <Button onClick={onSave} loading={pending}>
          {creating ? 'Create' : 'Save'}
        </Button>
      </Group>
    </>
  );
}

export function BusFormView({ bus, onSaved }: { bus?: Bus; onSaved: () => void }) {
  const creating = bus === undefined;
  const f = useFormState<BusForm>(busToForm(bus), (v) => validateBus(v, creating));
  const save = useMutation({
    mutationFn: () =>
      creating ? api('/buses', { body: busCreateBody(f.values) }) : api(`/buses/${enc(bus.name ?? '')}`, { method: 'PATCH', body: busPatchBody(f.values) }),
    onSuccess: () => {
      toast(`Bus ${f.values.name} ${creating ? 'created' : 'saved'}`);
      onSaved();
    },
  });
  const submit = () => {
    f.setTried(true);
    if (Object.keys(validateBus(f.values, creating)).length === 0) save.mutate();
  };
  return (
    <Stack gap="xs">
      <TextInput label="Name" withAsterisk disabled={!creating} value={f.values.name} error={f.errors.name} onChange={(e) => f.set('name', e.currentTarget.value)} />
      <TextInput label="Description" value={f.values.description} onChange={(e) => f.set('description', e.currentTarget.value)} />
      <Group grow align="flex-start">
        <TextInput
          label="Retention: max age"
          description="A duration, 1m to 8760h"
          placeholder="Default: 72h"
          value={f.values.maxAge}
          error={f.errors.maxAge}
          onChange={(e) => f.set('maxAge', e.currentTarget.value)}
        />
        <TextInput
          label="Retention: max bytes"
          description="A size of its own, at least 1 MiB (1048576), reserved in the event store; 0 or empty: none, what the bus holds counts against the account's storage quota"
          placeholder="Default: none"
          value={f.values.maxBytes}
          error={f.errors.maxBytes}
          onChange={(e) => f.set('maxBytes', e.currentTarget.value)}
        />
      </Group>
      <SaveBar creating={creating} pending={save.isPending} onSave={submit} error={save.error} />
    </Stack>
  );
}

/** SecretInput is a password field that is never filled from the API; on edit, left empty, the secret is kept. */
function SecretInput({ label, value, error, creating, onChange }: { label: string; value: string; error?: string; creating: boolean; onChange: (v: string) => void }) {
  return (
    <PasswordInput
      label={label}
      withAsterisk={creating}
      autoComplete="new-password"
      placeholder={creating ? undefined : 'Stored; leave empty to keep it'}
      value={value}
      error={error}
      onChange={(e) => onChange(e.currentTarget.value)}
    />
  );
}

export function ConnectionFormView({ connection, onSaved }: { connection?: Connection; onSaved: () => void }) {
  const creating = connection === undefined;
  const f = useFormState<ConnectionForm>(connectionToForm(connection), (v) => validateConnection(v, creating));
  const v = f.values;
  const save = useMutation({
    mutationFn: () =>
      creating
        ? api('/connections', { body: connectionBody(v) })
        : api(`/connections/${enc(connection.name ?? '')}`, { method: 'PUT', body: connectionBody(v) }),
    onSuccess: () => {
      // Secrets are not kept in the form once saved.
      f.setValues((x) => ({ ...x, password: '', apiKeyValue: '', clientSecret: '' }));
      toast(`Connection ${v.name} ${creating ? 'created' : 'saved'}`);
      onSaved();
    },
  });
  const submit = () => {
    f.setTried(true);
    if (Object.keys(validateConnection(v, creating)).length === 0) save.mutate();
  };
  const setRow = (i: number, patch: Partial<ConnectionForm['params'][number]>) =>
    f.set(
      'params',
      v.params.map((r, j) => (j === i ? { ...r, ...patch } : r)),
    );
  return (
    <Stack gap="xs">
      <TextInput label="Name" withAsterisk disabled={!creating} value={v.name} error={f.errors.name} onChange={(e) => f.set('name', e.currentTarget.value)} />
      <TextInput label="Description" value={v.description} onChange={(e) => f.set('description', e.currentTarget.value)} />
      <Select
        label="Authorization"
        withAsterisk
        data={authorizationTypes}
        value={v.authorizationType}
        allowDeselect={false}
        onChange={(t) => t && f.set('authorizationType', t as AuthorizationType)}
      />
      {v.authorizationType === 'BASIC' && (
        <Group grow align="flex-start">
          <TextInput label="Username" withAsterisk value={v.username} error={f.errors.username} onChange={(e) => f.set('username', e.currentTarget.value)} />
          <SecretInput label="Password" creating={creating} value={v.password} error={f.errors.password} onChange={(x) => f.set('password', x)} />
        </Group>
      )}
      {v.authorizationType === 'API_KEY' && (
        <Group grow align="flex-start">
          <TextInput label="Header name" withAsterisk placeholder="X-Api-Key" value={v.apiKeyName} error={f.errors.apiKeyName} onChange={(e) => f.set('apiKeyName', e.currentTarget.value)} />
          <SecretInput label="API key" creating={creating} value={v.apiKeyValue} error={f.errors.apiKeyValue} onChange={(x) => f.set('apiKeyValue', x)} />
        </Group>
      )}
      {v.authorizationType === 'OAUTH_CLIENT_CREDENTIALS' && (
        <>
          <Group grow align="flex-start">
            <TextInput
              label="Token endpoint"
              withAsterisk
              placeholder="https://auth.example.com/oauth2/token"
              value={v.oauthEndpoint}
              error={f.errors.oauthEndpoint}
              onChange={(e) => f.set('oauthEndpoint', e.currentTarget.value)}
            />
            <Select label="Method" data={['GET', 'POST', 'PUT']} allowDeselect={false} value={v.oauthMethod} onChange={(m) => m && f.set('oauthMethod', m as ConnectionForm['oauthMethod'])} />
          </Group>
          <Group grow align="flex-start">
            <TextInput label="Client id" withAsterisk value={v.clientId} error={f.errors.clientId} onChange={(e) => f.set('clientId', e.currentTarget.value)} />
            <SecretInput label="Client secret" creating={creating} value={v.clientSecret} error={f.errors.clientSecret} onChange={(x) => f.set('clientSecret', x)} />
          </Group>
          <TextInput label="Scopes" description="Separated by spaces or commas" value={v.scopes} onChange={(e) => f.set('scopes', e.currentTarget.value)} />
        </>
      )}
      <Text size="sm" fw={500} mt="xs">
        Invocation parameters (sent with every request)
      </Text>
      {v.params.length > 0 && (
        <Table>
          <Table.Tbody>
            {v.params.map((r, i) => (
              <Table.Tr key={i}>
                <Table.Td w={130}>
                  <Select aria-label={`Parameter ${i + 1} place`} data={['header', 'query', 'body']} allowDeselect={false} value={r.place} onChange={(p) => p && setRow(i, { place: p as ParamPlace })} />
                </Table.Td>
                <Table.Td>
                  <TextInput aria-label={`Parameter ${i + 1} key`} placeholder="Key" value={r.key} error={f.errors[`params.${i}`]} onChange={(e) => setRow(i, { key: e.currentTarget.value })} />
                </Table.Td>
                <Table.Td>
                  {r.secret ? (
                    <PasswordInput
                      aria-label={`Parameter ${i + 1} value`}
                      autoComplete="new-password"
                      placeholder={creating ? 'Value' : 'Stored; leave empty to keep it'}
                      value={r.value}
                      onChange={(e) => setRow(i, { value: e.currentTarget.value })}
                    />
                  ) : (
                    <TextInput aria-label={`Parameter ${i + 1} value`} placeholder="Value" value={r.value} onChange={(e) => setRow(i, { value: e.currentTarget.value })} />
                  )}
                </Table.Td>
                <Table.Td w={90}>
                  <Checkbox label="Secret" checked={r.secret} onChange={(e) => setRow(i, { secret: e.currentTarget.checked })} />
                </Table.Td>
                <Table.Td w={40}>
                  <ActionIcon variant="subtle" color="red" aria-label={`Remove parameter ${i + 1}`} onClick={() => f.set('params', v.params.filter((_, j) => j !== i))}>
                    ×
                  </ActionIcon>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Group>
        <Button size="xs" variant="light" onClick={() => f.set('params', [...v.params, { place: 'header', key: '', value: '', secret: false }])}>
          Add parameter
        </Button>
      </Group>
      <SaveBar creating={creating} pending={save.isPending} onSave={submit} error={save.error} />
    </Stack>
  );
}

export function ApiDestinationFormView({ destination, onSaved }: { destination?: ApiDestination; onSaved: () => void }) {
  const creating = destination === undefined;
  const f = useFormState<ApiDestinationForm>(apiDestinationToForm(destination), (x) => validateApiDestination(x, creating));
  const v = f.values;
  const connections = useQuery({
    queryKey: ['connections', 'picker'],
    queryFn: () => api<Schemas['ConnectionList']>('/connections', { query: { limit: 500 } }),
  });
  const names = (connections.data?.connections ?? []).map((c) => c.name ?? '');
  if (v.connection !== '' && !names.includes(v.connection)) names.push(v.connection);
  const save = useMutation({
    mutationFn: () =>
      creating
        ? api('/api-destinations', { body: apiDestinationBody(v) })
        : api(`/api-destinations/${enc(destination.name ?? '')}`, { method: 'PUT', body: apiDestinationBody(v) }),
    onSuccess: () => {
      toast(`API destination ${v.name} ${creating ? 'created' : 'saved'}`);
      onSaved();
    },
  });
  const submit = () => {
    f.setTried(true);
    if (Object.keys(validateApiDestination(v, creating)).length === 0) save.mutate();
  };
  return (
    <Stack gap="xs">
      <TextInput label="Name" withAsterisk disabled={!creating} value={v.name} error={f.errors.name} onChange={(e) => f.set('name', e.currentTarget.value)} />
      <TextInput label="Description" value={v.description} onChange={(e) => f.set('description', e.currentTarget.value)} />
      <Select
        label="Connection"
        withAsterisk
        searchable
        data={names}
        value={v.connection || null}
        error={f.errors.connection ?? (connections.isError ? 'The connections could not be loaded.' : undefined)}
        nothingFoundMessage={connections.isPending ? 'Loading…' : 'No connections: create one first.'}
        onChange={(c) => f.set('connection', c ?? '')}
      />
      <Group grow align="flex-start">
        <Select label="Method" w={120} style={{ flexGrow: 0 }} data={[...httpMethods]} allowDeselect={false} value={v.httpMethod} onChange={(m) => m && f.set('httpMethod', m as ApiDestinationForm['httpMethod'])} />
        <TextInput
          label="Endpoint"
          withAsterisk
          description='An http or https URL; each "*" path segment is filled from the event'
          placeholder="https://api.example.com/orders/*"
          value={v.invocationEndpoint}
          error={f.errors.invocationEndpoint}
          onChange={(e) => f.set('invocationEndpoint', e.currentTarget.value)}
        />
      </Group>
      <NumberInput
        label="Rate limit (requests per second)"
        description="1 to 300"
        placeholder="Default: 300"
        min={1}
        max={300}
        allowDecimal={false}
        value={v.rateLimit}
        error={f.errors.rateLimit}
        onChange={(n) => f.set('rateLimit', n === '' ? '' : String(n))}
      />
      <SaveBar creating={creating} pending={save.isPending} onSave={submit} error={save.error} />
    </Stack>
  );
}
