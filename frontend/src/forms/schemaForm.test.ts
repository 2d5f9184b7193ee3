import { describe, expect, it } from 'vitest';
import { fieldsFromSchema, initialValues, validateValues, type JSONSchemaObject } from './schemaForm';

// A schema as the worker renders it (worker/connector/schema.go), cut down from the mqtt and http plugins.
const pluginSchema: JSONSchemaObject = {
  type: 'object',
  required: ['broker', 'topics'],
  properties: {
    broker: { type: 'string', 'x-type': 'string', minLength: 1, description: 'Broker URL.' },
    topics: { type: 'string', 'x-type': 'string', minLength: 1 },
    qos: { type: 'string', 'x-type': 'enum', enum: ['0', '1', '2'], default: '1' },
    password: { type: 'string', 'x-type': 'string', writeOnly: true, format: 'password' },
    retain: { type: 'string', 'x-type': 'bool', enum: ['true', 'false'], default: 'false' },
    'tasks.max': { type: 'string', 'x-type': 'int', pattern: '^-?[0-9]+$', default: '1', 'x-minimum': 1 },
    headers: { type: 'string', 'x-type': 'json', contentMediaType: 'application/json' },
    timeout: { type: 'string', 'x-type': 'duration', pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$|^0$', default: '5s' },
  },
};

describe('fieldsFromSchema', () => {
  const fields = fieldsFromSchema(pluginSchema);
  const byKey = Object.fromEntries(fields.map((f) => [f.key, f]));

  it('puts required fields first', () => {
    expect(fields.slice(0, 2).map((f) => f.key)).toEqual(['broker', 'topics']);
    expect(byKey.broker.required).toBe(true);
    expect(byKey.qos.required).toBe(false);
  });

  it.each([
    { key: 'broker', kind: 'text' },
    { key: 'qos', kind: 'select' },
    { key: 'password', kind: 'password' },
    { key: 'retain', kind: 'boolean' },
    { key: 'tasks.max', kind: 'number' },
    { key: 'headers', kind: 'json' },
    { key: 'timeout', kind: 'text' },
  ])('renders $key as $kind', ({ key, kind }) => {
    expect(byKey[key].kind).toBe(kind);
  });

  it('marks secrets and keeps enums, defaults and descriptions', () => {
    expect(byKey.password.secret).toBe(true);
    expect(byKey.broker.secret).toBe(false);
    expect(byKey.qos.options).toEqual(['0', '1', '2']);
    expect(byKey.qos.default).toBe('1');
    expect(byKey.broker.description).toBe('Broker URL.');
  });

  it('labels a field with its title, else with its key in words, and hints with its first example', () => {
    const f = fieldsFromSchema({
      properties: {
        'mqtt.broker': { type: 'string', title: 'Broker URL', description: 'The broker to connect to.', examples: ['tcp://broker:1883', 'ssl://b:8883'] },
        'mqtt.qos': { type: 'string', title: '' },
        headers: { type: 'string', examples: [{ 'X-Team': 'shop' }] },
      },
    });
    const by = Object.fromEntries(f.map((x) => [x.key, x]));
    expect([by['mqtt.broker'].label, by['mqtt.broker'].description, by['mqtt.broker'].example]).toEqual(['Broker URL', 'The broker to connect to.', 'tcp://broker:1883']);
    expect([by['mqtt.qos'].label, by['mqtt.qos'].example]).toEqual(['MQTT QoS', undefined]);
    expect(by.headers.example).toBe('{"X-Team":"shop"}');
  });

  it('omits the keys it is told to', () => {
    const keys = fieldsFromSchema(pluginSchema, { omit: (k) => k.startsWith('tasks.') }).map((f) => f.key);
    expect(keys).not.toContain('tasks.max');
    expect(keys).toContain('broker');
  });
});

describe('initialValues', () => {
  it('fills defaults and keeps what is set', () => {
    const v = initialValues(fieldsFromSchema(pluginSchema), { qos: '2' });
    expect(v).toMatchObject({ qos: '2', retain: 'false', timeout: '5s', 'tasks.max': '1' });
    expect(v.broker).toBeUndefined();
  });
});

describe('validateValues', () => {
  const fields = fieldsFromSchema(pluginSchema);
  it.each([
    { name: 'missing required', values: { topics: 't' }, key: 'broker', msg: 'Broker is required' },
    { name: 'enum', values: { broker: 'b', topics: 't', qos: '7' }, key: 'qos', msg: 'QoS must be one of 0, 1, 2' },
    { name: 'json', values: { broker: 'b', topics: 't', headers: '{' }, key: 'headers', msg: 'Headers must be JSON' },
    { name: 'number', values: { broker: 'b', topics: 't', 'tasks.max': 'x' }, key: 'tasks.max', msg: 'Tasks max must be a number' },
    { name: 'minimum', values: { broker: 'b', topics: 't', 'tasks.max': '0' }, key: 'tasks.max', msg: 'Tasks max must be at least 1' },
    { name: 'pattern', values: { broker: 'b', topics: 't', timeout: 'soon' }, key: 'timeout', msg: 'Timeout does not have the expected form' },
  ])('reports $name', ({ values, key, msg }) => {
    expect(validateValues(fields, values as unknown as Record<string, string>)[key]).toBe(msg);
  });

  describe('a uri', () => {
    const uri = fieldsFromSchema({ required: ['url'], properties: { url: { type: 'string', title: 'URL', format: 'uri' } } });
    it.each(['not a url', '/hooks/orders', 'example.com/hooks', 'ftp://example.com/x', 'mailto:a@example.com'])('refuses %s', (v) => {
      expect(validateValues(uri, { url: v }).url).toBe('URL must be an absolute http:// or https:// URL');
    });
    it.each(['https://example.com/hooks/orders', 'http://127.0.0.1:9000/x?a=1'])('accepts %s', (v) => {
      expect(validateValues(uri, { url: v })).toEqual({});
    });
  });

  it('accepts a valid config', () => {
    expect(validateValues(fields, { broker: 'tcp://b:1883', topics: 't', qos: '0', timeout: '1.5s', headers: '{"a":"b"}' })).toEqual({});
  });
});
