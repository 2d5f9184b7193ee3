import { Button, Group, MultiSelect, NumberInput, Radio, Select, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, enc, type Schemas } from '../api/client';
import { ErrorAlert } from '../components/states';
import { toast } from '../components/toast';
import {
  countText,
  DEFAULT_RATE,
  destinationChoices,
  inBatches,
  MAX_RATE,
  newReplayForm,
  readAll,
  replayBody,
  validateReplay,
  windowChoices,
  type Archive,
  type DestinationKind,
  type Replay,
  type ReplayForm,
  type WindowPreset,
} from './replays';

/**
 * archivesQueryKey is the key of every archive of the account; the archives page invalidates ['archives']. An
 * object, not a word: ['archives', <bus>] is a bus's archives on the event trace page, and a bus may be named so.
 */
const archivesQueryKey = ['archives', { account: true }];

/**
 * accountArchives reads every archive of the account: the buses, then each bus's archives, a few buses at a time
 * (the API lists archives per bus only).
 */
async function accountArchives(): Promise<Archive[]> {
  const buses = await readAll(async (nextToken) => {
    const d = await api<Schemas['BusList']>('/buses', { query: { limit: 500, nextToken } });
    return { items: (d.buses ?? []).map((b) => b.name ?? ''), nextToken: d.nextToken };
  });
  const perBus = await inBatches(buses, 8, (bus) =>
    readAll(async (nextToken) => {
      const d = await api<Schemas['ArchiveList']>(`/buses/${enc(bus)}/archives`, { query: { limit: 500, nextToken } });
      return { items: (d.archives ?? []).map((a) => ({ ...a, bus: a.bus ?? bus })), nextToken: d.nextToken };
    }),
  );
  return perBus.flat();
}

/** useNames lists the names of a picker (a bus's rules, a rule's targets), every page; none while path is undefined. */
function useNames(key: unknown[], path: string | undefined, pick: (d: Record<string, unknown>) => { name?: string }[] | undefined) {
  const q = useQuery({
    queryKey: ['replay-picker', ...key],
    enabled: path !== undefined,
    queryFn: () =>
      readAll(async (nextToken) => {
        const d = await api<Record<string, unknown>>(path!, { query: { limit: 500, nextToken } });
        return { items: (pick(d) ?? []).map((x) => x.name ?? '').filter((n) => n !== ''), nextToken: d.nextToken as string | undefined };
      }),
    staleTime: 30_000,
  });
  return { names: q.data ?? [], pending: q.isPending && path !== undefined, failed: q.isError };
}

/**
 * StartReplayForm starts a replay (POST /api/v1/replays): name, description, the archive (a select of every
 * archive of the account, by bus), the window of stored time, the destination on the archive's bus (every rule,
 * chosen rules, or one target of one rule) and the rate. archive pre-selects one (an archive's Replay button).
 * The form is checked as the server would before it is sent (replays.ts validateReplay); what the server refuses
 * anyway is said under the form. onStarted gets the replay as the server answered it.
 */
export function StartReplayForm({ archive, onStarted }: { archive?: Archive; onStarted: (r: Replay) => void }) {
  const [form, setForm] = useState<ReplayForm>(() => newReplayForm(new Date(), archive?.name ?? ''));
  const [tried, setTried] = useState(false);
  const archives = useQuery({ queryKey: archivesQueryKey, queryFn: accountArchives, staleTime: 10_000 });
  const known = archives.data ?? [];
  // The archive the form was opened with is there before the list is read, and stays when it is not in it.
  const all = archive && !known.some((a) => a.name === archive.name) ? [archive, ...known] : known;
  const chosen = all.find((a) => a.name === form.archive);
  const bus = chosen?.bus;
  const rules = useNames(['rules', bus], bus && form.destination !== 'all' ? `/buses/${enc(bus)}/rules` : undefined, (d) => d.rules as { name?: string }[]);
  const targets = useNames(
    ['targets', bus, form.rule],
    bus && form.destination === 'target' && form.rule ? `/buses/${enc(bus)}/rules/${enc(form.rule)}/targets` : undefined,
    (d) => d.targets as { name?: string }[],
  );
  const start = useMutation({
    mutationFn: (body: Replay) => api<Replay>('/replays', { body }),
    onSuccess: (r) => {
      toast(`Replay ${r.name ?? form.name} started`);
      onStarted(r);
    },
  });

  // Errors are said once the user tried to start, then kept up to date as the fields change.
  const errors = tried ? validateReplay(form, new Date(), chosen?.createdAt) : {};
  const set = (patch: Partial<ReplayForm>) => setForm((f) => ({ ...f, ...patch }));
  function submit(e: FormEvent) {
    e.preventDefault();
    setTried(true);
    // One time for the check and the body: a preset window ends at it.
    const now = new Date();
    if (Object.keys(validateReplay(form, now, chosen?.createdAt)).length === 0) start.mutate(replayBody(form, now));
  }

  const groups = [...new Set(all.map((a) => a.bus ?? ''))].map((b) => ({
    group: `Bus ${b}`,
    items: all.filter((a) => (a.bus ?? '') === b).map((a) => a.name ?? ''),
  }));
  return (
    <form onSubmit={submit} noValidate aria-label="Start a replay">
      <Stack gap="xs">
        <TextInput label="Name" withAsterisk description='Letters, digits, "_" and "-"' value={form.name} error={errors.name} onChange={(e) => set({ name: e.currentTarget.value })} data-autofocus />
        <TextInput label="Description" value={form.description} error={errors.description} onChange={(e) => set({ description: e.currentTarget.value })} />
        <Select
          label="Archive"
          withAsterisk
          searchable
          data={groups}
          value={form.archive || null}
          error={errors.archive ?? (archives.isError ? 'The archives could not be loaded.' : undefined)}
          nothingFoundMessage={archives.isPending ? 'Loading…' : 'No archives: create one on a bus first.'}
          onChange={(v) => set(v === form.archive ? {} : { archive: v ?? '', rules: [], rule: '', target: '' })}
        />
        <Select
          label="Window"
          description="Of when the bus stored the events, not of their own time"
          data={windowChoices}
          value={form.window}
          allowDeselect={false}
          onChange={(v) => v && set({ window: v as WindowPreset })}
        />
        {form.window === 'custom' && (
          <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="sm" verticalSpacing="xs">
            <TextInput type="datetime-local" label="From" description="In your time zone" value={form.from} error={errors.from} onChange={(e) => set({ from: e.currentTarget.value })} />
            <TextInput type="datetime-local" label="To" description="Not after now; excluded" value={form.to} error={errors.to} onChange={(e) => set({ to: e.currentTarget.value })} />
          </SimpleGrid>
        )}
        <Radio.Group
          label="Destination"
          description={bus ? `On the archive's bus, ${bus}` : "On the archive's bus"}
          value={form.destination}
          onChange={(v) => set({ destination: v as DestinationKind })}
        >
          <Group gap="md" mt={4}>
            {destinationChoices.map((c) => (
              <Radio key={c.value} value={c.value} label={c.label} />
            ))}
          </Group>
        </Radio.Group>
        {form.destination === 'rules' && (
          <MultiSelect
            label="Rules"
            withAsterisk
            searchable
            placeholder={bus ? undefined : 'Choose an archive first'}
            disabled={!bus}
            data={rules.names}
            value={form.rules}
            error={errors.rules ?? (rules.failed ? 'The rules could not be loaded.' : undefined)}
            nothingFoundMessage={rules.pending ? 'Loading…' : 'No rules on this bus.'}
            onChange={(v) => set({ rules: v })}
          />
        )}
        {form.destination === 'target' && (
          <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="sm" verticalSpacing="xs">
            <Select
              label="Rule"
              withAsterisk
              searchable
              placeholder={bus ? undefined : 'Choose an archive first'}
              disabled={!bus}
              data={rules.names}
              value={form.rule || null}
              error={errors.rule ?? (rules.failed ? 'The rules could not be loaded.' : undefined)}
              nothingFoundMessage={rules.pending ? 'Loading…' : 'No rules on this bus.'}
              onChange={(v) => set(v === form.rule ? {} : { rule: v ?? '', target: '' })}
            />
            <Select
              label="Target"
              withAsterisk
              searchable
              placeholder={form.rule ? undefined : 'Choose a rule first'}
              disabled={!form.rule}
              data={targets.names}
              value={form.target || null}
              error={errors.target ?? (targets.failed ? 'The targets could not be loaded.' : undefined)}
              nothingFoundMessage={targets.pending ? 'Loading…' : 'No targets on this rule.'}
              onChange={(v) => set({ target: v ?? '' })}
            />
          </SimpleGrid>
        )}
        <NumberInput
          label="Rate (events per second)"
          description={`At most ${countText(MAX_RATE)}, so that live traffic keeps flowing beside the replay`}
          placeholder={`Default: ${countText(DEFAULT_RATE)}`}
          min={1}
          max={MAX_RATE}
          allowDecimal={false}
          allowNegative={false}
          value={form.rate}
          error={errors.rate}
          onChange={(n) => set({ rate: n === '' ? '' : String(n) })}
        />
        <ErrorAlert error={start.error} />
        <Group justify="flex-end" mt="sm">
          <Button type="submit" loading={start.isPending}>
            Start replay
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
