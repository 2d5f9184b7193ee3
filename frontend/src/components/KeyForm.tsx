import { Alert, Button, Checkbox, Group, Select, Stack, TagsInput, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { busesAllowed, checkKeyForm, emptyKeyForm, expiryChoices, keyFormError, type Expiry, type KeyForm, type KeyFormErrors } from '../pages/keys';
import { isRole, roleOptions, roleSummary } from '../pages/roles';

/**
 * KeyCreateForm is the form of a new API key (kind apiKey: name, role, expiry, buses and, for an instance
 * administrator, the instance-administrator flag) or access key (name, role, expiry). It checks what it can before
 * sending (pages/keys.ts), sends send(form, now), places the server's refusal on its field, and hands the answer,
 * which holds the secret, to onCreated.
 */
export function KeyCreateForm<R>({
  kind,
  account,
  offerInstanceAdmin = false,
  busNames = [],
  send,
  onCreated,
  onCancel,
}: {
  kind: 'apiKey' | 'accessKey';
  account: string;
  offerInstanceAdmin?: boolean;
  busNames?: string[];
  send: (f: KeyForm, now: Date) => Promise<R>;
  onCreated: (created: R) => void;
  onCancel: () => void;
}) {
  const [f, setF] = useState<KeyForm>(emptyKeyForm);
  const [errors, setErrors] = useState<KeyFormErrors>({});
  const set = (patch: Partial<KeyForm>) => setF((old) => ({ ...old, ...patch }));
  const create = useMutation({
    mutationFn: (now: Date) => send(f, now),
    onSuccess: onCreated,
    onError: (err) => setErrors(keyFormError(err)),
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const now = new Date();
    const errs = checkKeyForm(f, now, kind);
    setErrors(errs);
    if (Object.keys(errs).length === 0) create.mutate(now);
  }

  const withBuses = kind === 'apiKey' && busesAllowed(f.role);
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label="Name"
          description="To recognise the key by. Two live keys may share a name, to replace one without downtime."
          required
          autoComplete="off"
          data-autofocus
          value={f.name}
          onChange={(e) => set({ name: e.currentTarget.value })}
          error={errors.name}
        />
        <Select
          label="Role"
          description={isRole(f.role) ? roleSummary[f.role] : `What the key may do in account ${account}.`}
          required
          placeholder="Choose a role"
          data={roleOptions}
          value={f.role || null}
          // Buses restrict putting events: a role that cannot put events has none (the field hides).
          onChange={(v) => set({ role: isRole(v ?? '') ? (v as KeyForm['role']) : '', ...(busesAllowed(v ?? '') ? {} : { buses: [] }) })}
          allowDeselect={false}
          error={errors.role}
        />
        <Select
          label="Expires"
          data={expiryChoices}
          value={f.expiry}
          onChange={(v) => v && set({ expiry: v as Expiry })}
          allowDeselect={false}
        />
        {f.expiry === 'custom' && (
          <TextInput
            type="datetime-local"
            label="Expires at"
            description="In your time zone; at most 10 years from now."
            value={f.customExpiry}
            onChange={(e) => set({ customExpiry: e.currentTarget.value })}
            error={errors.customExpiry}
          />
        )}
        {f.expiry !== 'custom' && errors.customExpiry && (
          <Alert color="red" role="alert" p="xs">
            {errors.customExpiry}
          </Alert>
        )}
        {withBuses && (
          <TagsInput
            label="Buses"
            description="Only these buses may receive its events; none: every bus. Reading and other permissions are not limited by it."
            placeholder={f.buses.length === 0 ? 'Every bus' : undefined}
            data={busNames}
            value={f.buses}
            onChange={(v) => set({ buses: v })}
            error={errors.buses}
            clearable
          />
        )}
        {kind === 'apiKey' && offerInstanceAdmin && (
          <Checkbox
            label="Instance administrator’s key"
            description="Admin in every account, and manages accounts and users. Give it only to what administers the installation."
            checked={f.instanceAdmin}
            onChange={(e) => set({ instanceAdmin: e.currentTarget.checked, ...(e.currentTarget.checked ? { role: 'admin' as const } : {}) })}
          />
        )}
        {errors.form && (
          <Alert color="red" role="alert" title="Could not create the key">
            {errors.form}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
          <Button type="submit" loading={create.isPending}>
            Create key
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
