import { JsonInput, PasswordInput, Select, Stack, TextInput } from '@mantine/core';
import type { FieldSpec } from './schemaForm';

/** ConfigForm renders fields generated from a JSON Schema (see schemaForm.ts) with their errors. */
export function ConfigForm({
  fields,
  values,
  errors,
  onChange,
}: {
  fields: FieldSpec[];
  values: Record<string, string>;
  errors: Record<string, string>;
  onChange: (key: string, value: string) => void;
}) {
  return (
    <Stack gap="xs">
      {fields.map((f) => {
        // key is not in common: React wants it written on the element, not spread into it.
        const common = {
          label: f.label,
          description: f.description,
          withAsterisk: f.required,
          error: errors[f.key],
          // An emptied field takes the default: saying so helps more than an example.
          placeholder: f.default !== undefined ? `Default: ${f.default}` : f.example !== undefined ? `e.g. ${f.example}` : undefined,
        };
        const value = values[f.key] ?? '';
        switch (f.kind) {
          case 'select':
          case 'boolean':
            return <Select key={f.key} {...common} data={f.options ?? []} value={value || null} onChange={(v) => onChange(f.key, v ?? '')} clearable={!f.required} allowDeselect={!f.required} />;
          case 'password':
            return <PasswordInput key={f.key} {...common} value={value} onChange={(e) => onChange(f.key, e.currentTarget.value)} autoComplete="new-password" />;
          case 'json':
            return <JsonInput key={f.key} {...common} value={value} onChange={(v) => onChange(f.key, v)} autosize minRows={2} />;
          default:
            return <TextInput key={f.key} {...common} value={value} onChange={(e) => onChange(f.key, e.currentTarget.value)} />;
        }
      })}
    </Stack>
  );
}
