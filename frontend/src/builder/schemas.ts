import { useQueries } from '@tanstack/react-query';
import { api, enc } from '../api/client';
import { fieldsFromSchema, type FieldSpec, type JSONSchemaObject } from '../forms/schemaForm';
import { BUILTIN_TARGET_SCHEMAS, sourceConfigOmitted, targetConfigOmitted } from './palette';
import type { NodeData } from './types';

/** pluginClassOf is the plugin whose schema describes a node's config, if any. */
export function pluginClassOf(d: NodeData): string | undefined {
  if (d.kind === 'source') return `${d.sourceType}-source`;
  if (d.kind === 'target' && d.plugin) return d.targetType;
  return undefined;
}

/** configFields are the form fields of a source or target node, once its schema is known. */
export function configFields(d: NodeData, schemas: Record<string, JSONSchemaObject | undefined>): FieldSpec[] | undefined {
  if (d.kind === 'target' && !d.plugin) {
    const s = BUILTIN_TARGET_SCHEMAS[d.targetType as keyof typeof BUILTIN_TARGET_SCHEMAS];
    return s ? fieldsFromSchema(s) : [];
  }
  const cls = pluginClassOf(d);
  const s = cls ? schemas[cls] : undefined;
  if (!s) return undefined;
  if (d.kind === 'source') return fieldsFromSchema(s, { omit: (k) => sourceConfigOmitted(k, d.sourceType) });
  return fieldsFromSchema(s, { omit: targetConfigOmitted });
}

/** usePluginSchemas loads the JSON Schemas of the given plugins (cached; a plugin's schema does not change). */
export function usePluginSchemas(classes: string[]) {
  const uniq = [...new Set(classes)].sort();
  const results = useQueries({
    queries: uniq.map((c) => ({
      queryKey: ['plugin-schema', c],
      queryFn: () => api<JSONSchemaObject>(`/runtime/plugins/${enc(c)}/schema`),
      staleTime: Infinity,
    })),
  });
  const schemas: Record<string, JSONSchemaObject | undefined> = {};
  const errors: Record<string, unknown> = {};
  uniq.forEach((c, i) => {
    schemas[c] = results[i].data;
    if (results[i].error) errors[c] = results[i].error;
  });
  return { schemas, errors };
}
