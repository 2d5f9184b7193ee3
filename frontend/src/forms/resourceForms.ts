/**
 * The resource forms' pure parts: form values of buses, connections and API destinations turned into the API's
 * request bodies and back, and their validation. No React here; the forms are in components/ResourceForms.tsx.
 */
import type { components } from '../api/schema';

type S = components['schemas'];
export type Bus = S['Bus'];
export type BusPatch = S['BusPatch'];
export type Connection = S['Connection'];
export type ConnectionParameter = S['ConnectionParameter'];
export type ConnectionHttpParameters = S['ConnectionHttpParameters'];
export type ApiDestination = S['ApiDestination'];

export type FormErrors = Record<string, string>;

const namePattern = /^[A-Za-z0-9._-]{1,128}$/;

function checkName(name: string, errors: FormErrors) {
  if (name.trim() === '') errors.name = 'A name is required.';
  else if (!namePattern.test(name.trim())) errors.name = 'Letters, digits, ".", "_" and "-" only (at most 128).';
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

// ---- buses ----

export interface BusForm {
  name: string;
  description: string;
  /** maxAge is a Go duration ("72h"); empty keeps the default. */
  maxAge: string;
  /** maxBytes is a whole number of bytes as text; empty keeps the default. */
  maxBytes: string;
}

const durationPattern = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

export function busToForm(b?: Bus): BusForm {
  return {
    name: b?.name ?? '',
    description: b?.description ?? '',
    maxAge: b?.retention?.maxAge ?? '',
    maxBytes: b?.retention?.maxBytes !== undefined ? String(b.retention.maxBytes) : '',
  };
}

export function validateBus(f: BusForm, creating: boolean): FormErrors {
  const e: FormErrors = {};
  if (creating) checkName(f.name, e);
  if (f.maxAge.trim() !== '' && !durationPattern.test(f.maxAge.trim())) e.maxAge = 'A duration such as 72h or 30m.';
  if (f.maxBytes.trim() !== '' && !/^[0-9]+$/.test(f.maxBytes.trim())) e.maxBytes = 'A whole number of bytes.';
  return e;
}

function retentionOf(f: BusForm): Bus['retention'] | undefined {
  const r: NonNullable<Bus['retention']> = {};
  if (f.maxAge.trim() !== '') r.maxAge = f.maxAge.trim();
  if (f.maxBytes.trim() !== '') r.maxBytes = Number(f.maxBytes.trim());
  return Object.keys(r).length > 0 ? r : undefined;
}

/** busCreateBody is the body of POST /buses. */
export function busCreateBody(f: BusForm): Bus {
  const b: Bus = { name: f.name.trim() };
  if (f.description.trim() !== '') b.description = f.description.trim();
  const r = retentionOf(f);
  if (r) b.retention = r;
  return b;
}

/** busPatchBody is the body of PATCH /buses/{bus}: the description always, the retention when given. */
export function busPatchBody(f: BusForm): BusPatch {
  const p: BusPatch = { description: f.description.trim() };
  const r = retentionOf(f);
  if (r) p.retention = r;
  return p;
}

// ---- connections ----

export type AuthorizationType = 'BASIC' | 'API_KEY' | 'OAUTH_CLIENT_CREDENTIALS';
export const authorizationTypes: { value: AuthorizationType; label: string }[] = [
  { value: 'BASIC', label: 'Basic (username and password)' },
  { value: 'API_KEY', label: 'API key (a header)' },
  { value: 'OAUTH_CLIENT_CREDENTIALS', label: 'OAuth client credentials' },
];

export type ParamPlace = 'header' | 'query' | 'body';

export interface ParamRow {
  place: ParamPlace;
  key: string;
  value: string;
  secret: boolean;
}

export interface ConnectionForm {
  name: string;
  description: string;
  authorizationType: AuthorizationType;
  username: string;
  password: string;
  apiKeyName: string;
  apiKeyValue: string;
  oauthEndpoint: string;
  oauthMethod: 'GET' | 'POST' | 'PUT';
  clientId: string;
  clientSecret: string;
  /** scopes are separated by spaces or commas. */
  scopes: string;
  /** params are the invocation HTTP parameters sent with every request. */
  params: ParamRow[];
}

const places: [ParamPlace, keyof ConnectionHttpParameters][] = [
  ['header', 'headerParameters'],
  ['query', 'queryStringParameters'],
  ['body', 'bodyParameters'],
];

export function paramsToRows(p?: ConnectionHttpParameters): ParamRow[] {
  const rows: ParamRow[] = [];
  for (const [place, key] of places) {
    for (const x of p?.[key] ?? []) {
      // A secret value is never answered: the row keeps an empty value, which the body leaves out (kept).
      rows.push({ place, key: x.key ?? '', value: x.isValueSecret ? '' : x.value ?? '', secret: x.isValueSecret ?? false });
    }
  }
  return rows;
}

export function rowsToParams(rows: ParamRow[]): ConnectionHttpParameters | undefined {
  const out: ConnectionHttpParameters = {};
  for (const r of rows) {
    if (r.key.trim() === '') continue;
    const key = places.find(([p]) => p === r.place)![1];
    const param: ConnectionParameter = { key: r.key.trim() };
    if (!(r.secret && r.value === '')) param.value = r.value;
    if (r.secret) param.isValueSecret = true;
    (out[key] ??= []).push(param);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** connectionToForm fills the form from a connection as the API answers it: secret fields stay empty. */
export function connectionToForm(c?: Connection): ConnectionForm {
  const a = c?.authParameters;
  return {
    name: c?.name ?? '',
    description: c?.description ?? '',
    authorizationType: (c?.authorizationType as AuthorizationType) ?? 'API_KEY',
    username: a?.basicAuthParameters?.username ?? '',
    password: '',
    apiKeyName: a?.apiKeyAuthParameters?.apiKeyName ?? '',
    apiKeyValue: '',
    oauthEndpoint: a?.oauthParameters?.authorizationEndpoint ?? '',
    oauthMethod: (a?.oauthParameters?.httpMethod as ConnectionForm['oauthMethod']) ?? 'POST',
    clientId: a?.oauthParameters?.clientParameters?.clientId ?? '',
    clientSecret: '',
    scopes: (a?.oauthParameters?.scopes ?? []).join(' '),
    params: paramsToRows(a?.invocationHttpParameters),
  };
}

/**
 * validateConnection checks what the form can check; secrets are required on create only (on edit, an empty
 * secret keeps the stored one).
 */
export function validateConnection(f: ConnectionForm, creating: boolean): FormErrors {
  const e: FormErrors = {};
  if (creating) checkName(f.name, e);
  const need = (k: keyof ConnectionForm, label: string, secret = false) => {
    if (String(f[k]).trim() === '' && (!secret || creating)) e[k] = `${label} is required.`;
  };
  switch (f.authorizationType) {
    case 'BASIC':
      need('username', 'The username');
      need('password', 'The password', true);
      break;
    case 'API_KEY':
      need('apiKeyName', 'The header name');
      need('apiKeyValue', 'The key', true);
      break;
    case 'OAUTH_CLIENT_CREDENTIALS':
      need('oauthEndpoint', 'The token endpoint');
      if (f.oauthEndpoint.trim() !== '' && !isHttpUrl(f.oauthEndpoint.trim())) e.oauthEndpoint = 'An absolute http or https URL.';
      need('clientId', 'The client id');
      need('clientSecret', 'The client secret', true);
      break;
  }
  f.params.forEach((r, i) => {
    if (r.key.trim() === '' && r.value !== '') e[`params.${i}`] = 'A parameter needs a key.';
    else if (creating && r.secret && r.key.trim() !== '' && r.value === '') e[`params.${i}`] = 'A secret parameter needs its value.';
  });
  return e;
}

/**
 * connectionBody is the body of POST /connections and PUT /connections/{name}: only the member of
 * authParameters that the authorization type selects, and secrets only when typed (absent, the stored one is kept).
 */
export function connectionBody(f: ConnectionForm): Connection {
  const c: Connection = { name: f.name.trim(), authorizationType: f.authorizationType, authParameters: {} };
  if (f.description.trim() !== '') c.description = f.description.trim();
  const a = c.authParameters!;
  const secret = (v: string) => (v !== '' ? v : undefined);
  switch (f.authorizationType) {
    case 'BASIC':
      a.basicAuthParameters = { username: f.username.trim(), password: secret(f.password) };
      break;
    case 'API_KEY':
      a.apiKeyAuthParameters = { apiKeyName: f.apiKeyName.trim(), apiKeyValue: secret(f.apiKeyValue) };
      break;
    case 'OAUTH_CLIENT_CREDENTIALS': {
      const scopes = f.scopes.split(/[\s,]+/).filter((s) => s !== '');
      a.oauthParameters = {
        authorizationEndpoint: f.oauthEndpoint.trim(),
        httpMethod: f.oauthMethod,
        clientParameters: { clientId: f.clientId.trim(), clientSecret: secret(f.clientSecret) },
      };
      if (scopes.length > 0) a.oauthParameters.scopes = scopes;
      break;
    }
  }
  const params = rowsToParams(f.params);
  if (params) a.invocationHttpParameters = params;
  return dropUndefined(c);
}

function dropUndefined<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

// ---- API destinations ----

export const httpMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

export interface ApiDestinationForm {
  name: string;
  description: string;
  connection: string;
  invocationEndpoint: string;
  httpMethod: (typeof httpMethods)[number];
  /** rateLimit is 1 to 300 as text; empty keeps the default (300). */
  rateLimit: string;
}

export function apiDestinationToForm(a?: ApiDestination): ApiDestinationForm {
  return {
    name: a?.name ?? '',
    description: a?.description ?? '',
    connection: a?.connection ?? '',
    invocationEndpoint: a?.invocationEndpoint ?? '',
    httpMethod: a?.httpMethod ?? 'POST',
    rateLimit: a?.invocationRateLimitPerSecond !== undefined ? String(a.invocationRateLimitPerSecond) : '',
  };
}

export function validateApiDestination(f: ApiDestinationForm, creating: boolean): FormErrors {
  const e: FormErrors = {};
  if (creating) checkName(f.name, e);
  if (f.connection.trim() === '') e.connection = 'Pick a connection.';
  const ep = f.invocationEndpoint.trim();
  if (ep === '') e.invocationEndpoint = 'The endpoint is required.';
  else if (!isHttpUrl(ep)) e.invocationEndpoint = 'An absolute http or https URL.';
  const rl = f.rateLimit.trim();
  if (rl !== '' && (!/^[0-9]+$/.test(rl) || Number(rl) < 1 || Number(rl) > 300)) e.rateLimit = 'A whole number from 1 to 300.';
  return e;
}

/** apiDestinationBody is the body of POST /api-destinations and PUT /api-destinations/{name}. */
export function apiDestinationBody(f: ApiDestinationForm): ApiDestination {
  const a: ApiDestination = {
    name: f.name.trim(),
    connection: f.connection.trim(),
    invocationEndpoint: f.invocationEndpoint.trim(),
    httpMethod: f.httpMethod,
  };
  if (f.description.trim() !== '') a.description = f.description.trim();
  if (f.rateLimit.trim() !== '') a.invocationRateLimitPerSecond = Number(f.rateLimit.trim());
  return a;
}

// ---- display ----

/** maskedConfig shows a target's config as the API answers it, with secret-looking values masked. */
export function maskedConfig(config: Record<string, unknown> | undefined): [string, string][] {
  return Object.entries(config ?? {}).map(([k, v]) => {
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    return [k, /secret|password|token|apikey|api_key/i.test(k) && text !== '' && text !== '***' ? '***' : text];
  });
}
