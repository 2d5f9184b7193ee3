import { ActionIcon, Alert, Autocomplete, Badge, Button, Code, CopyButton, Group, JsonInput, Loader, NumberInput, SegmentedControl, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { IconCheck, IconCopy } from '@tabler/icons-react';
import { useEffect, useState } from 'react';
import { api, type Schemas, type TestEventPatternOutput } from '../api/client';
import { errorText } from '../api/problem';
import { ErrorAlert } from '../components/states';
import { ConfigForm } from '../forms/ConfigForm';
import { initialValues, validateValues, type JSONSchemaObject } from '../forms/schemaForm';
import { deliveryErrors, EVENT_AGE, RETRY_ATTEMPTS, type DeliveryField } from './convert';
import { checkPattern } from './patternCheck';
import { configFields } from './schemas';
import { configProblems, fieldMessage, fieldProblem, type ServerProblem } from './serverProblems';
import { showsErrors, useBuilder } from './store';
import type { BuilderNode, FilterData, RetryPolicy, TargetData, TransformData, Webhook } from './types';
import { PatternProblems } from '../components/PatternProblems';

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** useShowsErrors tells whether the node's errors show yet: once it was touched, or a save attempted. */
const useShowsErrors = (id: string) => useBuilder((s) => showsErrors(s, id));

const noProblems: ServerProblem[] = [];
/** useServerProblems are the problems the server found at the node in the last save (gone once it is edited). */
const useServerProblems = (id: string) => useBuilder((s) => s.serverErrors[id] ?? noProblems);

const exampleEvent = JSON.stringify(
  { specversion: '1.0', id: '1', source: 'shop', type: 'order.created', data: { id: 1, amount: 120 } },
  null,
  2,
);

function PatternTester({ pattern }: { pattern: string }) {
  const [event, setEvent] = useState(exampleEvent);
  const test = useMutation({
    mutationFn: async () => {
      let ev: unknown;
      let pat: unknown;
      try {
        ev = JSON.parse(event);
      } catch {
        throw new Error('The event is not JSON.');
      }
      try {
        pat = JSON.parse(pattern);
      } catch {
        throw new Error('The pattern is not JSON.');
      }
      return api<TestEventPatternOutput>('/test-event-pattern', { body: { event: ev, eventPattern: pat } });
    },
  });
  const r = test.data;
  return (
    <Stack gap="xs">
      <JsonInput label="Test against this event" autosize minRows={6} value={event} onChange={setEvent} aria-label="Test event" />
      <Button size="xs" variant="light" onClick={() => test.mutate()} loading={test.isPending}>
        Test
      </Button>
      <ErrorAlert error={test.error} title="Could not test" />
      {r && r.match && (
        <Alert color="green" title="Matches" data-testid="pattern-result">
          The rule would route this event.
        </Alert>
      )}
      {r && !r.match && (
        <Alert color="yellow" title="Does not match" data-testid="pattern-result">
          <Text size="sm">
            At <Code>{r.explanation?.path || '(the event)'}</Code>: {r.explanation?.reason}.
          </Text>
          <Text size="sm">
            Expected one of <Code>{JSON.stringify(r.explanation?.expected)}</Code>
            {r.explanation?.actual !== undefined ? (
              <>
                , the event has <Code>{JSON.stringify(r.explanation.actual)}</Code>
              </>
            ) : (
              ', the event has no value there'
            )}
            .
          </Text>
        </Alert>
      )}
    </Stack>
  );
}

function FilterPanel({ node }: { node: BuilderNode & { data: FilterData } }) {
  const update = useBuilder((s) => s.update);
  const shown = useShowsErrors(node.id);
  const server = fieldProblem(useServerProblems(node.id), { field: 'pattern' });
  // Checked at each key stroke: the problems are said as they are made.
  const problems = shown ? checkPattern(node.data.pattern) : [];
  // The page's own check first; the server's where it has none.
  const patternError =
    problems.length > 0 ? (
      <PatternProblems problems={problems} />
    ) : (
      server
    );
  return (
    <Stack gap="xs">
      <JsonInput
        label="Event pattern"
        description='A JSON object: {"type": ["order.created"], "data": {"amount": [{"numeric": [">", 100]}]}}'
        autosize
        minRows={6}
        value={node.data.pattern}
        onChange={(v) => update(node.id, { pattern: v })}
        aria-label="Event pattern"
        error={patternError}
      />
      <PatternTester pattern={node.data.pattern} />
    </Stack>
  );
}

function TransformPanel({ node }: { node: BuilderNode & { data: TransformData } }) {
  const update = useBuilder((s) => s.update);
  const server = useServerProblems(node.id);
  const error = (field: string) => fieldProblem(server, { field });
  const d = node.data;
  return (
    <Stack gap="xs">
      <SegmentedControl
        value={d.mode}
        onChange={(v) => update(node.id, { mode: v as TransformData['mode'] })}
        data={[
          { value: 'template', label: 'Template' },
          { value: 'constant', label: 'Constant' },
          { value: 'path', label: 'Path' },
        ]}
      />
      {d.mode === 'template' && (
        <>
          <JsonInput
            label="Input paths"
            description={
              <>
                Names for parts of the event, each a JSON path: {'{"id": "$.data.id"}'} lets the template say {'<id>'} for the event's data.id (
                <Code>inputPathsMap</Code>).
              </>
            }
            autosize
            minRows={3}
            value={d.inputPathsMap}
            onChange={(v) => update(node.id, { inputPathsMap: v })}
            error={error('inputPathsMap')}
          />
          <JsonInput
            label="Input template"
            description={
              <>
                What the target receives: text or JSON in which each {'<name>'} is replaced by the part of the event its input path names. The event's
                attributes, {'<ce.id>'}, {'<ce.type>'}, …, need no path (<Code>inputTemplate</Code>).
              </>
            }
            autosize
            minRows={3}
            value={d.inputTemplate}
            onChange={(v) => update(node.id, { inputTemplate: v })}
            error={error('inputTemplate')}
            withAsterisk
          />
        </>
      )}
      {d.mode === 'constant' && (
        <JsonInput
          label="Constant input"
          description={
            <>
              The same JSON for every event, which the target receives in place of the event's data (<Code>input</Code>).
            </>
          }
          autosize
          minRows={3}
          value={d.input}
          onChange={(v) => update(node.id, { input: v })}
          error={error('input')}
          withAsterisk
        />
      )}
      {d.mode === 'path' && (
        <TextInput
          label="Input path"
          description={
            <>
              The part of the event the target receives as the data, as a JSON path: $.data.order is the event's data.order, $ the whole event (
              <Code>inputPath</Code>).
            </>
          }
          value={d.inputPath}
          onChange={(e) => update(node.id, { inputPath: e.currentTarget.value })}
          error={error('inputPath')}
          withAsterisk
        />
      )}
    </Stack>
  );
}

function ConfigPanel({ node, schemas, schemaError }: { node: BuilderNode; schemas: Record<string, JSONSchemaObject | undefined>; schemaError?: unknown }) {
  const update = useBuilder((s) => s.update);
  const fillDefaults = useBuilder((s) => s.fillDefaults);
  const shown = useShowsErrors(node.id);
  const server = useServerProblems(node.id);
  const d = node.data;
  const fields = configFields(d, schemas);
  const config = d.kind === 'source' || d.kind === 'target' ? d.config : {};
  // Fill the schema's defaults in once the schema is known; values already set (or cleared) are kept.
  useEffect(() => {
    if (!fields) return;
    const init = initialValues(fields, config);
    if (Object.keys(init).length !== Object.keys(config).length) fillDefaults(node.id, init);
  }, [fields, config, node.id, fillDefaults]);
  if (schemaError) return <ErrorAlert error={schemaError} title="Could not load the plugin's schema" />;
  if (!fields) return <Loader size="xs" />;
  // The form's own check first; the server's (a bus that does not exist, a value the plugin refuses) where it has none.
  const errors = { ...configProblems(server), ...(shown ? validateValues(fields, config) : {}) };
  // A key the form does not show (one the console sets itself) has its problem said under the form.
  const keys = new Set(fields.map((f) => f.key));
  const other = Object.entries(configProblems(server)).filter(([k]) => !keys.has(k));
  return (
    <>
      <ConfigForm fields={fields} values={config} errors={errors} onChange={(k, v) => update(node.id, { config: { ...config, [k]: v } })} />
      {other.map(([k, m]) => (
        <Text key={k} size="sm" c="red">
          <Code>{k}</Code>: {m}
        </Text>
      ))}
    </>
  );
}

/** DeliveryPanel sets how a target retries and where the events it gives up go. */
function DeliveryPanel({ node, busName, buses }: { node: BuilderNode & { data: TargetData }; busName: string; buses: string[] }) {
  const update = useBuilder((s) => s.update);
  const shown = useShowsErrors(node.id);
  const server = useServerProblems(node.id);
  const d = node.data;
  const errs = shown ? deliveryErrors(d, busName) : {};
  const error = (f: DeliveryField) => (errs[f] ? cap(errs[f]) : fieldProblem(server, { field: f }));
  // An emptied field is left out: the API's default applies.
  const setRetry = (k: keyof RetryPolicy, v: number | string) => update(node.id, { retry: { ...d.retry, [k]: typeof v === 'number' ? v : undefined } });
  return (
    <Stack gap="xs">
      <Title order={3} size="h6">
        Delivery
      </Title>
      <NumberInput
        label="Retry attempts"
        description={`How many more times a delivery that failed is tried, with a growing pause between tries: ${RETRY_ATTEMPTS.min} to ${RETRY_ATTEMPTS.max}.`}
        placeholder={`Default: ${RETRY_ATTEMPTS.default}`}
        min={RETRY_ATTEMPTS.min}
        max={RETRY_ATTEMPTS.max}
        allowDecimal={false}
        allowNegative={false}
        value={d.retry?.maximumRetryAttempts ?? ''}
        onChange={(v) => setRetry('maximumRetryAttempts', v)}
        error={error('maximumRetryAttempts')}
      />
      <NumberInput
        label="Maximum event age (seconds)"
        description={`How long an event is tried before it is given up: ${EVENT_AGE.min} s (a minute) to ${EVENT_AGE.max} s (a day).`}
        placeholder={`Default: ${EVENT_AGE.default}`}
        min={EVENT_AGE.min}
        max={EVENT_AGE.max}
        allowDecimal={false}
        allowNegative={false}
        value={d.retry?.maximumEventAgeInSeconds ?? ''}
        onChange={(v) => setRetry('maximumEventAgeInSeconds', v)}
        error={error('maximumEventAgeInSeconds')}
      />
      <Autocomplete
        label="Dead-letter bus"
        description="A bus of the account that receives the events the target gives up, with why. Empty: they go to the account's dead-letter stream."
        placeholder="The account's dead-letter stream"
        data={buses.filter((b) => b !== busName)}
        value={d.deadLetterBus ?? ''}
        onChange={(v) => update(node.id, { deadLetterBus: v })}
        error={error('deadLetterBus')}
      />
    </Stack>
  );
}

function Copy({ value, label }: { value: string; label: string }) {
  return (
    <CopyButton value={value} timeout={2000}>
      {({ copied, copy }) => (
        <ActionIcon variant="subtle" color={copied ? 'teal' : 'gray'} onClick={copy} aria-label={label} title={copied ? 'Copied' : label}>
          {copied ? <IconCheck size={16} aria-hidden /> : <IconCopy size={16} aria-hidden />}
        </ActionIcon>
      )}
    </CopyButton>
  );
}

/** WebhookPanel shows where an http source receives events, as the API answered for the saved source. */
function WebhookPanel({ webhook }: { webhook?: Webhook }) {
  if (!webhook) {
    return (
      <Text size="sm" c="dimmed" data-testid="webhook-pending">
        The webhook URL and token appear here once the channel is saved.
      </Text>
    );
  }
  const masked = webhook.token === '***';
  return (
    <Stack gap="xs" data-testid="webhook">
      <Title order={3} size="h6">
        Webhook
      </Title>
      {webhook.urls.map((u, i) => (
        <TextInput key={u} label={webhook.urls.length > 1 ? `Webhook URL ${i + 1}` : 'Webhook URL'} value={u} readOnly rightSection={<Copy value={u} label="Copy webhook URL" />} />
      ))}
      {webhook.token !== undefined && (
        <TextInput
          label="Token"
          description={masked ? 'The API does not show the token here.' : 'The secret in the URLs: whoever has it can send events to the bus.'}
          value={webhook.token}
          readOnly
          rightSection={masked ? undefined : <Copy value={webhook.token} label="Copy token" />}
        />
      )}
    </Stack>
  );
}

/**
 * UnplacedProblems are the server's problems at the node that no field of the panel shows (its type, a config key
 * the form does not have): said at the top of the panel, as on the node.
 */
function UnplacedProblems({ problems }: { problems: ServerProblem[] }) {
  const fields = new Set(['name', 'pattern', 'inputTemplate', 'inputPathsMap', 'input', 'inputPath', 'maximumRetryAttempts', 'maximumEventAgeInSeconds', 'deadLetterBus']);
  const left = problems.filter((p) => p.config === undefined && !(p.field && fields.has(p.field)));
  if (left.length === 0) return null;
  return (
    <Alert color="red" p="xs" title="Not saved" data-testid="panel-server-problems">
      {left.map((p, i) => (
        <Text key={i} size="sm">
          {cap(fieldMessage(p))}
        </Text>
      ))}
    </Alert>
  );
}

const kindLabel: Record<BuilderNode['data']['kind'], string> = { source: 'Source', bus: 'Bus', filter: 'Filter', transform: 'Transform', target: 'Target' };

/** SidePanel configures the selected node. */
export function SidePanel({ schemas, schemaErrors }: { schemas: Record<string, JSONSchemaObject | undefined>; schemaErrors: Record<string, unknown> }) {
  const node = useBuilder((s) => s.nodes.find((n) => n.id === s.selected));
  const update = useBuilder((s) => s.update);
  const existing = useBuilder((s) => s.existing);
  const busName = useBuilder((s) => s.nodes.flatMap((n) => (n.data.kind === 'bus' ? [n.data.name] : []))[0] ?? '');
  const buses = useQuery({ queryKey: ['buses', 'all'], queryFn: () => api<Schemas['BusList']>('/buses', { query: { limit: 500 } }) });
  const busNames = (buses.data?.buses ?? []).map((b) => b.name ?? '');
  const server = useBuilder((s) => (s.selected ? s.serverErrors[s.selected] : undefined) ?? noProblems);
  if (!node) {
    return (
      <Text c="dimmed" size="sm">
        Select a node to configure it. Drag nodes from the palette, and connect them from left to right: sources → bus → filter → (transform) → targets.
      </Text>
    );
  }
  const d = node.data;
  return (
    <Stack gap="sm" data-testid="side-panel">
      <Group gap="xs">
        <Title order={2} size="h5">
          {kindLabel[d.kind]}
        </Title>
        {d.kind === 'target' && <Badge>{d.targetType}</Badge>}
        {d.kind === 'source' && <Badge color="grape">{d.sourceType}</Badge>}
      </Group>
      <UnplacedProblems problems={server} />
      {d.kind === 'bus' && (
        <Autocomplete
          label="Bus name"
          description={existing ? 'A saved rule stays on its bus.' : 'An existing bus, or a new one (created on save).'}
          disabled={existing}
          withAsterisk
          data={busNames}
          value={d.name}
          onChange={(v) => update(node.id, { name: v })}
        />
      )}
      {d.kind === 'source' && (
        <>
          <Alert color="grape" p="xs">
            A source belongs to the bus, not to this rule: every rule of the bus receives its events, and saving here changes it for all of them.
          </Alert>
          <TextInput label="Source name" withAsterisk value={d.name} onChange={(e) => update(node.id, { name: e.currentTarget.value })} error={fieldProblem(server, { field: 'name' })} />
          <ConfigPanel node={node} schemas={schemas} schemaError={schemaErrors[`${d.sourceType}-source`]} />
          {d.sourceType === 'http' && <WebhookPanel webhook={d.webhook} />}
        </>
      )}
      {d.kind === 'target' && (
        <>
          <TextInput label="Target name" withAsterisk value={d.name} onChange={(e) => update(node.id, { name: e.currentTarget.value })} error={fieldProblem(server, { field: 'name' })} />
          <ConfigPanel node={node} schemas={schemas} schemaError={d.plugin ? schemaErrors[d.targetType] : undefined} />
          <DeliveryPanel node={node as BuilderNode & { data: TargetData }} busName={busName} buses={busNames} />
        </>
      )}
      {d.kind === 'filter' && <FilterPanel node={node as BuilderNode & { data: FilterData }} />}
      {d.kind === 'transform' && <TransformPanel node={node as BuilderNode & { data: TransformData }} />}
      {buses.error ? <Text size="xs" c="dimmed">{errorText(buses.error)}</Text> : null}
    </Stack>
  );
}
