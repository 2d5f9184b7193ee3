import { Button, Code, Group, JsonInput, Modal, NumberInput, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { api, enc, type Schemas } from '../api/client';
import { ApiError } from '../api/problem';
import { ConfirmButton, Crumbs } from '../components/Detail';
import { ErrorAlert, QueryState } from '../components/states';
import { RelativeTime } from '../components/Time';
import { toast } from '../components/toast';
import { bytesText } from '../format';
import { StartReplayForm } from './ReplayForm';
import {
  archiveCreateBody,
  archivePatchBody,
  archivePatternProblems,
  archiveToForm,
  countText,
  MAX_RETENTION_DAYS,
  patternSummary,
  readAll,
  retentionDaysText,
  validateArchive,
  type Archive,
  type ArchiveForm,
} from './replays';
import { PatternProblems } from '../components/PatternProblems';

/** isPatternRefused says whether the server refused the archive for its pattern: said under the field. */
const isPatternRefused = (err: unknown) => err instanceof ApiError && (err.problem.code === 'InvalidEventPattern' || err.problem.field === 'eventPattern');

/**
 * ArchiveFormView creates an archive of bus (archive undefined) or changes one's description, pattern and
 * retention (the name stays). The pattern is checked as a rule's once the field is left or the form sent, each
 * problem at its place; one the server refuses anyway is said under the field too.
 */
function ArchiveFormView({ bus, archive, onSaved }: { bus: string; archive?: Archive; onSaved: () => void }) {
  const creating = archive === undefined;
  const [form, setForm] = useState<ArchiveForm>(() => archiveToForm(archive));
  const [tried, setTried] = useState(false);
  const [patternLeft, setPatternLeft] = useState(false);
  const base = `/buses/${enc(bus)}/archives`;
  const save = useMutation({
    mutationFn: () =>
      creating ? api<Archive>(base, { body: archiveCreateBody(form) }) : api<Archive>(`${base}/${enc(archive.name ?? '')}`, { method: 'PATCH', body: archivePatchBody(form, archive) }),
    onSuccess: () => {
      toast(`Archive ${form.name} ${creating ? 'created' : 'saved'}`);
      onSaved();
    },
  });
  const errors = tried ? validateArchive(form, creating) : {};
  const problems = tried || patternLeft ? archivePatternProblems(form) : [];
  const set = (patch: Partial<ArchiveForm>) => {
    setForm((f) => ({ ...f, ...patch }));
    if (save.isError) save.reset();
  };
  function submit(e: FormEvent) {
    e.preventDefault();
    setTried(true);
    if (Object.keys(validateArchive(form, creating)).length === 0) save.mutate();
  }
  const patternError: ReactNode =
    problems.length > 0 ? (
      <PatternProblems problems={problems} />
    ) : isPatternRefused(save.error) ? (
      (save.error as ApiError).message
    ) : undefined;
  return (
    <form onSubmit={submit} noValidate aria-label={creating ? 'Create an archive' : `Edit archive ${archive.name ?? ''}`}>
      <Stack gap="xs">
        <TextInput
          label="Name"
          withAsterisk
          disabled={!creating}
          description={creating ? 'Letters, digits, "_" and "-"; unique in the account' : undefined}
          value={form.name}
          error={errors.name}
          onChange={(e) => set({ name: e.currentTarget.value })}
          data-autofocus
        />
        <TextInput label="Description" value={form.description} error={errors.description} onChange={(e) => set({ description: e.currentTarget.value })} />
        <JsonInput
          label="Event pattern"
          description={`Optional: empty archives every event of the bus. As a rule's: {"type": ["order.created"]}.${creating ? '' : ' A change applies to the events stored from then on.'}`}
          autosize
          minRows={3}
          maxRows={12}
          value={form.pattern}
          onChange={(v) => set({ pattern: v })}
          onBlur={() => setPatternLeft(true)}
          error={patternError}
          // JsonInput shows validationError instead of error while the text is not JSON: the same words.
          validationError={patternError}
        />
        <NumberInput
          label="Retention (days)"
          description={`0 keeps the events until the archive is deleted; at most ${countText(MAX_RETENTION_DAYS)}`}
          min={0}
          max={MAX_RETENTION_DAYS}
          allowDecimal={false}
          allowNegative={false}
          value={form.retentionDays}
          error={errors.retentionDays}
          onChange={(n) => set({ retentionDays: n === '' ? '' : String(n) })}
        />
        <ErrorAlert error={isPatternRefused(save.error) ? undefined : save.error} />
        <Group justify="flex-end" mt="sm">
          <Button type="submit" loading={save.isPending}>
            {creating ? 'Create archive' : 'Save archive'}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

/**
 * ArchivesPage (/buses/:bus/archives) lists a bus's archives (what each holds, its retention and pattern) with
 * create, edit and delete, and starts a replay of one (StartReplayForm, pre-filled with it; then its page).
 */
export function ArchivesPage() {
  const { bus = '' } = useParams();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [formFor, setFormFor] = useState<{ archive?: Archive } | undefined>();
  const [replaying, setReplaying] = useState<Archive | undefined>();
  const base = `/buses/${enc(bus)}/archives`;
  const list = useQuery({
    queryKey: ['archives', { bus }],
    queryFn: () =>
      readAll(async (nextToken) => {
        const d = await api<Schemas['ArchiveList']>(base, { query: { limit: 500, nextToken } });
        return { items: d.archives ?? [], nextToken: d.nextToken };
      }),
  });
  // ['archives'] holds every list of archives: this one, the replay form's and the event trace page's.
  const invalidate = () => qc.invalidateQueries({ queryKey: ['archives'] });

  return (
    <Stack maw={1400}>
      <Crumbs items={[['Buses', '/buses'], [bus, `/buses/${enc(bus)}`], ['Archives']]} />
      <Group justify="space-between">
        <Title order={1} size="h3">
          Archives of {bus}
        </Title>
        <Group gap="xs">
          <Button variant="default" component={Link} to="/replays">
            Replays
          </Button>
          <Button onClick={() => setFormFor({})}>New archive</Button>
        </Group>
      </Group>
      <Text size="sm">
        An archive keeps the events the bus stores from its creation on that match its pattern, for its retention, so that they can be replayed: put on the
        bus again, to every rule, some rules or one target.
      </Text>
      <QueryState
        query={list}
        isEmpty={(d) => d.length === 0}
        empty="No archives on this bus yet. Create one to keep its events (all of them, or those matching a pattern) for replays."
      >
        {(archives) => (
          <Table.ScrollContainer type="native" minWidth={1000} aria-label="Archives">
            <Table striped highlightOnHover verticalSpacing="xs">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Events</Table.Th>
                  <Table.Th>Size</Table.Th>
                  <Table.Th>Retention</Table.Th>
                  <Table.Th>Pattern</Table.Th>
                  <Table.Th>Created</Table.Th>
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {archives.map((a) => (
                  <Table.Tr key={a.name} data-testid="archive-row" data-name={a.name}>
                    <Table.Td>
                      <Text size="sm" fw={500}>
                        {a.name}
                      </Text>
                      {a.description && (
                        <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
                          {a.description}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>{countText(a.eventCount)}</Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{bytesText(a.sizeBytes ?? 0)}</Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{retentionDaysText(a.retentionDays)}</Table.Td>
                    <Table.Td maw={320}>
                      {a.eventPattern ? (
                        <Code title={JSON.stringify(a.eventPattern, null, 2)} style={{ overflowWrap: 'anywhere' }}>
                          {patternSummary(a.eventPattern)}
                        </Code>
                      ) : (
                        <Text size="sm">{patternSummary(a.eventPattern)}</Text>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <RelativeTime value={a.createdAt} />
                    </Table.Td>
                    <Table.Td>
                      <Group gap="xs" justify="flex-end" wrap="nowrap">
                        <Button size="xs" onClick={() => setReplaying(a)}>
                          Replay
                        </Button>
                        <Button size="xs" variant="light" onClick={() => setFormFor({ archive: a })}>
                          Edit
                        </Button>
                        <ConfirmButton
                          label="Delete"
                          title="Delete archive?"
                          color="red"
                          question={`Delete archive ${a.name} and the ${countText(a.eventCount)} events it holds? Its replays that have not ended fail. This cannot be undone.`}
                          run={() => api(`${base}/${enc(a.name ?? '')}`, { method: 'DELETE' })}
                          onDone={() => {
                            toast(`Archive ${a.name} deleted`);
                            void invalidate();
                          }}
                        />
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryState>
      <Modal opened={formFor !== undefined} onClose={() => setFormFor(undefined)} title={formFor?.archive ? `Edit archive ${formFor.archive.name}` : 'Create an archive'} size="lg">
        {formFor && (
          <ArchiveFormView
            bus={bus}
            archive={formFor.archive}
            onSaved={() => {
              setFormFor(undefined);
              void invalidate();
            }}
          />
        )}
      </Modal>
      <Modal opened={replaying !== undefined} onClose={() => setReplaying(undefined)} title={`Start a replay of ${replaying?.name ?? ''}`} size="lg">
        {replaying && <StartReplayForm archive={{ ...replaying, bus: replaying.bus ?? bus }} onStarted={(r) => navigate(`/replays/${enc(r.name ?? '')}`)} />}
      </Modal>
    </Stack>
  );
}
