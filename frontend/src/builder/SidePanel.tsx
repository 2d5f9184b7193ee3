import { Alert, Autocomplete, Badge, Button, Code, Group, JsonInput, Loader, SegmentedControl, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, type Schemas, type TestEventPatternOutput } from '../api/client';
import { errorText } from '../api/problem';
import { ErrorAlert } from '../components/states';
import { ConfigForm } from '../forms/ConfigForm';
import { initialValues, validateValues, type JSONSchemaObject } from '../forms/schemaForm';
import { configFields } from './schemas';
import { useBuilder } from './store';
import type { BuilderNode, FilterData, TransformData } from './types';

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
      />
      <PatternTester pattern={node.data.pattern} />
    </Stack>
  );
}

function TransformPanel({ node }: { node: BuilderNode & { data: TransformData } }) {
  const update = useBuilder((s) => s.update);
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
          <JsonInput label="Input paths" description='inputPathsMap: variables bound to JSON paths, {"id": "$.data.id"}' autosize minRows={3} value={d.inputPathsMap} onChange={(v) => update(node.id, { inputPathsMap: v })} />
          <JsonInput label="Input template" description="inputTemplate: text or JSON with <variable> placeholders; <ce.id>, <ce.type>, … need no declaring." autosize minRows={3} value={d.inputTemplate} onChange={(v) => update(node.id, { inputTemplate: v })} withAsterisk />
        </>
      )}
      {d.mode === 'constant' && <JsonInput label="Constant input" description="input: constant JSON that replaces the data of every event." autosize minRows={3} value={d.input} onChange={(v) => update(node.id, { input: v })} withAsterisk />}
      {d.mode === 'path' && <TextInput label="Input path" description="inputPath: the part of the event that becomes the data, such as $.data.order." value={d.inputPath} onChange={(e) => update(node.id, { inputPath: e.currentTarget.value })} withAsterisk />}
    </Stack>
  );
}

function ConfigPanel({ node, schemas, schemaError }: { node: BuilderNode; schemas: Record<string, JSONSchemaObject | undefined>; schemaError?: unknown }) {
  const update = useBuilder((s) => s.update);
  const d = node.data;
  const fields = configFields(d, schemas);
  const config = d.kind === 'source' || d.kind === 'target' ? d.config : {};
  // Fill the schema's defaults in once the schema is known; values already set (or cleared) are kept.
  useEffect(() => {
    if (!fields) return;
    const init = initialValues(fields, config);
    if (Object.keys(init).length !== Object.keys(config).length) update(node.id, { config: init });
  }, [fields, config, node.id, update]);
  if (schemaError) return <ErrorAlert error={schemaError} title="Could not load the plugin's schema" />;
  if (!fields) return <Loader size="xs" />;
  const errors = validateValues(fields, config);
  return <ConfigForm fields={fields} values={config} errors={errors} onChange={(k, v) => update(node.id, { config: { ...config, [k]: v } })} />;
}

const kindLabel: Record<BuilderNode['data']['kind'], string> = { source: 'Source', bus: 'Bus', filter: 'Filter', transform: 'Transform', target: 'Target' };

/** SidePanel configures the selected node. */
export function SidePanel({ schemas, schemaErrors }: { schemas: Record<string, JSONSchemaObject | undefined>; schemaErrors: Record<string, unknown> }) {
  const node = useBuilder((s) => s.nodes.find((n) => n.id === s.selected));
  const update = useBuilder((s) => s.update);
  const existing = useBuilder((s) => s.existing);
  const buses = useQuery({ queryKey: ['buses', 'all'], queryFn: () => api<Schemas['BusList']>('/buses', { query: { limit: 500 } }) });
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
      {d.kind === 'bus' && (
        <Autocomplete
          label="Bus name"
          description={existing ? 'A saved rule stays on its bus.' : 'An existing bus, or a new one (created on save).'}
          disabled={existing}
          withAsterisk
          data={(buses.data?.buses ?? []).map((b) => b.name ?? '')}
          value={d.name}
          onChange={(v) => update(node.id, { name: v })}
        />
      )}
      {d.kind === 'source' && (
        <>
          <Alert color="grape" p="xs">
            A source belongs to the bus, not to this rule: every rule of the bus receives its events, and saving here changes it for all of them.
          </Alert>
          <TextInput label="Source name" withAsterisk value={d.name} onChange={(e) => update(node.id, { name: e.currentTarget.value })} />
          <ConfigPanel node={node} schemas={schemas} schemaError={schemaErrors[`${d.sourceType}-source`]} />
        </>
      )}
      {d.kind === 'target' && (
        <>
          <TextInput label="Target name" withAsterisk value={d.name} onChange={(e) => update(node.id, { name: e.currentTarget.value })} />
          <ConfigPanel node={node} schemas={schemas} schemaError={d.plugin ? schemaErrors[d.targetType] : undefined} />
        </>
      )}
      {d.kind === 'filter' && <FilterPanel node={node as BuilderNode & { data: FilterData }} />}
      {d.kind === 'transform' && <TransformPanel node={node as BuilderNode & { data: TransformData }} />}
      {buses.error ? <Text size="xs" c="dimmed">{errorText(buses.error)}</Text> : null}
    </Stack>
  );
}
