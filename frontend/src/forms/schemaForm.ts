/**
 * Form generation from JSON Schema: the worker's plugin schemas (worker/connector/schema.go: every property a
 * string, its kind said by enum, pattern, contentMediaType and x-type; secrets writeOnly with format password;
 * title, description and one example when the plugin gives them) and the console's own schemas of built-in
 * nodes, whose web addresses are format uri. Pure: no React here.
 */

import { fieldLabel } from '../format';

export interface JSONSchemaProperty {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  writeOnly?: boolean;
  minLength?: number;
  contentMediaType?: string;
  title?: string;
  examples?: unknown[];
  'x-type'?: string;
  'x-minimum'?: number;
}

export interface JSONSchemaObject {
  title?: string;
  description?: string;
  type?: string;
  properties?: Record<string, JSONSchemaProperty>;
  required?: string[];
}

export type FieldKind = 'text' | 'select' | 'password' | 'json' | 'number' | 'boolean';

export interface FieldSpec {
  key: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  secret: boolean;
  options?: string[];
  default?: string;
  description?: string;
  /** example is the schema's first example, shown as a hint in the empty field. */
  example?: string;
  pattern?: string;
  /** format "uri" asks for an absolute http or https URL. */
  format?: string;
  minimum?: number;
}

export interface FieldsOptions {
  /** omit drops keys a form must not show (keys the control plane sets, for instance). */
  omit?: (key: string) => boolean;
}

function str(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** fieldsFromSchema turns an object schema into form fields: required ones first, then in key order. */
export function fieldsFromSchema(schema: JSONSchemaObject, opts: FieldsOptions = {}): FieldSpec[] {
  const required = new Set(schema.required ?? []);
  const out: FieldSpec[] = [];
  for (const [key, p] of Object.entries(schema.properties ?? {})) {
    if (opts.omit?.(key)) continue;
    const secret = p.writeOnly === true || p.format === 'password';
    const xType = p['x-type'];
    const enumValues = p.enum?.map((v) => String(v));
    let kind: FieldKind = 'text';
    if (secret) kind = 'password';
    else if (enumValues && enumValues.length === 2 && enumValues.includes('true') && enumValues.includes('false')) kind = 'boolean';
    else if (enumValues) kind = 'select';
    else if (p.contentMediaType === 'application/json' || xType === 'json') kind = 'json';
    else if (xType === 'int' || p.type === 'integer' || p.type === 'number') kind = 'number';
    out.push({
      key,
      label: p.title || fieldLabel(key),
      kind,
      required: required.has(key),
      secret,
      options: enumValues,
      default: str(p.default),
      description: p.description,
      example: str(p.examples?.[0]),
      pattern: p.pattern,
      format: p.format,
      minimum: p['x-minimum'],
    });
  }
  out.sort((a, b) => Number(b.required) - Number(a.required) || a.key.localeCompare(b.key));
  return out;
}

/** initialValues gives every field its default, keeping values already set. */
export function initialValues(fields: FieldSpec[], current: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = { ...current };
  for (const f of fields) {
    if (out[f.key] === undefined && f.default !== undefined) out[f.key] = f.default;
  }
  return out;
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false; // not absolute, or not a URL at all
  }
}

/** validateValues checks values against fields and returns a message per offending key. */
export function validateValues(fields: FieldSpec[], values: Record<string, string>): Record<string, string> {
  const errs: Record<string, string> = {};
  for (const f of fields) {
    const v = values[f.key] ?? '';
    if (v === '') {
      if (f.required) errs[f.key] = `${f.label} is required`;
      continue;
    }
    if (f.format === 'uri' && !isHttpUrl(v)) {
      errs[f.key] = `${f.label} must be an absolute http:// or https:// URL`;
    } else if (f.options && !f.options.includes(v)) {
      errs[f.key] = `${f.label} must be one of ${f.options.join(', ')}`;
    } else if (f.kind === 'json') {
      try {
        JSON.parse(v);
      } catch {
        errs[f.key] = `${f.label} must be JSON`;
      }
    } else if (f.kind === 'number' && !/^-?[0-9]+(\.[0-9]+)?$/.test(v)) {
      errs[f.key] = `${f.label} must be a number`;
    } else if (f.kind === 'number' && f.minimum !== undefined && Number(v) < f.minimum) {
      errs[f.key] = `${f.label} must be at least ${f.minimum}`;
    } else if (f.pattern && !f.secret) {
      let re: RegExp | undefined;
      try {
        re = new RegExp(f.pattern, 'u');
      } catch {
        re = undefined; // a pattern JavaScript cannot read is left to the server
      }
      if (re && !re.test(v)) errs[f.key] = `${f.label} does not have the expected form`;
    }
  }
  return errs;
}
