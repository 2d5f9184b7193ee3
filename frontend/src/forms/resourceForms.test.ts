import { describe, expect, it } from 'vitest';
import {
  apiDestinationBody,
  apiDestinationToForm,
  busCreateBody,
  busPatchBody,
  busToForm,
  connectionBody,
  connectionToForm,
  maskedConfig,
  validateApiDestination,
  validateBus,
  validateConnection,
  type ConnectionForm,
} from './resourceForms';

describe('bus form', () => {
  it('round-trips a bus with retention', () => {
    const f = busToForm({ name: 'orders', description: 'shop orders', retention: { maxAge: '72h0m0s', maxBytes: 1048576 } });
    expect(f).toEqual({ name: 'orders', description: 'shop orders', maxAge: '72h0m0s', maxBytes: '1048576' });
    expect(busCreateBody(f)).toEqual({ name: 'orders', description: 'shop orders', retention: { maxAge: '72h0m0s', maxBytes: 1048576 } });
  });

  it('leaves the retention out when not given', () => {
    const f = { ...busToForm(), name: 'orders' };
    expect(busCreateBody(f)).toEqual({ name: 'orders' });
    expect(busPatchBody({ ...f, description: ' new ' })).toEqual({ description: 'new' });
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ name: 'a b' }, 'name'],
    [{ name: 'ok', maxAge: '3 days' }, 'maxAge'],
    [{ name: 'ok', maxBytes: '1.5' }, 'maxBytes'],
  ])('refuses %j naming %s', (over, field) => {
    expect(Object.keys(validateBus({ ...busToForm(), ...over }, true))).toEqual([field]);
  });

  it('does not check the name on edit', () => {
    expect(validateBus({ ...busToForm(), name: '' }, false)).toEqual({});
  });
});

const apiKey: ConnectionForm = { ...connectionToForm(), name: 'crm', authorizationType: 'API_KEY', apiKeyName: 'X-Api-Key', apiKeyValue: 'k-1' };

describe('connection form', () => {
  it('sends only the member the authorization type selects', () => {
    const f: ConnectionForm = { ...apiKey, username: 'left-over', clientId: 'left-over' };
    expect(connectionBody(f)).toEqual({
      name: 'crm',
      authorizationType: 'API_KEY',
      authParameters: { apiKeyAuthParameters: { apiKeyName: 'X-Api-Key', apiKeyValue: 'k-1' } },
    });
    expect(connectionBody({ ...f, authorizationType: 'BASIC', password: 'p' })).toEqual({
      name: 'crm',
      authorizationType: 'BASIC',
      authParameters: { basicAuthParameters: { username: 'left-over', password: 'p' } },
    });
  });

  it('builds OAuth client credentials with scopes', () => {
    const f: ConnectionForm = {
      ...connectionToForm(),
      name: 'shop',
      authorizationType: 'OAUTH_CLIENT_CREDENTIALS',
      oauthEndpoint: 'https://auth.example.com/token',
      oauthMethod: 'POST',
      clientId: 'c',
      clientSecret: 's',
      scopes: 'orders.read, orders.write',
    };
    expect(validateConnection(f, true)).toEqual({});
    expect(connectionBody(f).authParameters).toEqual({
      oauthParameters: {
        authorizationEndpoint: 'https://auth.example.com/token',
        httpMethod: 'POST',
        clientParameters: { clientId: 'c', clientSecret: 's' },
        scopes: ['orders.read', 'orders.write'],
      },
    });
  });

  it('never fills secrets from an answer and leaves an empty secret out (the stored one is kept)', () => {
    const f = connectionToForm({
      name: 'crm',
      authorizationType: 'API_KEY',
      authParameters: {
        apiKeyAuthParameters: { apiKeyName: 'X-Api-Key' },
        invocationHttpParameters: {
          headerParameters: [{ key: 'X-Team', value: 'shop' }],
          queryStringParameters: [{ key: 'token', isValueSecret: true }],
        },
      },
    });
    expect(f.apiKeyValue).toBe('');
    expect(f.params).toEqual([
      { place: 'header', key: 'X-Team', value: 'shop', secret: false },
      { place: 'query', key: 'token', value: '', secret: true },
    ]);
    expect(validateConnection(f, false)).toEqual({});
    expect(validateConnection(f, true)).toEqual({ apiKeyValue: 'The key is required.', 'params.1': 'A secret parameter needs its value.' });
    expect(connectionBody(f).authParameters).toEqual({
      apiKeyAuthParameters: { apiKeyName: 'X-Api-Key' },
      invocationHttpParameters: {
        headerParameters: [{ key: 'X-Team', value: 'shop' }],
        queryStringParameters: [{ key: 'token', isValueSecret: true }],
      },
    });
  });

  it.each([
    ['BASIC', { username: '' }, ['username', 'password']],
    ['OAUTH_CLIENT_CREDENTIALS', { oauthEndpoint: 'ftp://x' }, ['oauthEndpoint', 'clientId', 'clientSecret']],
  ] as const)('%s names its missing fields', (type, over, fields) => {
    const e = validateConnection({ ...connectionToForm(), name: 'c', authorizationType: type, ...over }, true);
    expect(Object.keys(e).sort()).toEqual([...fields].sort());
  });
});

describe('API destination form', () => {
  it('round-trips', () => {
    const a = { name: 'orders', connection: 'crm', invocationEndpoint: 'https://crm.example.com/o/*', httpMethod: 'PUT' as const, invocationRateLimitPerSecond: 10 };
    const f = apiDestinationToForm(a);
    expect(validateApiDestination(f, true)).toEqual({});
    expect(apiDestinationBody(f)).toEqual(a);
    expect(apiDestinationBody({ ...f, rateLimit: '' })).not.toHaveProperty('invocationRateLimitPerSecond');
  });

  it.each([
    [{ connection: '' }, 'connection'],
    [{ invocationEndpoint: 'crm.example.com' }, 'invocationEndpoint'],
    [{ rateLimit: '301' }, 'rateLimit'],
    [{ rateLimit: '0' }, 'rateLimit'],
  ])('refuses %j', (over, field) => {
    const f = { ...apiDestinationToForm(), name: 'd', connection: 'crm', invocationEndpoint: 'https://x.example.com', ...over };
    expect(Object.keys(validateApiDestination(f, true))).toEqual([field]);
  });
});

describe('maskedConfig', () => {
  it('masks secret-looking keys and renders values as text', () => {
    expect(maskedConfig({ url: 'https://x', 'auth.password': 'p', retries: 3, token: '***' })).toEqual([
      ['url', 'https://x'],
      ['auth.password', '***'],
      ['retries', '3'],
      ['token', '***'],
    ]);
  });
});
