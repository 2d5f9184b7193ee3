import { describe, expect, it } from 'vitest';
import { checkPattern, problemText } from './patternCheck';

describe('checkPattern accepts', () => {
  it.each([
    ['the example of the filter panel', '{"type": ["order.created"], "data": {"amount": [{"numeric": [">", 100]}]}}'],
    ['exact values of every kind', '{"a": ["x", 1, 2.5, true, false, null]}'],
    ['nested fields', '{"data": {"order": {"status": ["paid"]}}}'],
    ['prefix and suffix', '{"source": [{"prefix": "shop/"}, {"suffix": ".png"}]}'],
    ['prefix ignoring case', '{"source": [{"prefix": {"equals-ignore-case": "SHOP/"}}]}'],
    ['equals-ignore-case', '{"type": [{"equals-ignore-case": "Order.Created"}]}'],
    ['wildcard', '{"subject": [{"wildcard": "orders/*/lines"}]}'],
    ['cidr', '{"data": {"ip": [{"cidr": "10.0.0.0/24"}]}}'],
    ['exists', '{"data": {"gift": [{"exists": false}]}}'],
    ['a numeric range', '{"amount": [{"numeric": [">", 0, "<=", 5]}]}'],
    ['numeric equality', '{"amount": [{"numeric": ["=", 5]}]}'],
    ['anything-but of a string, a number, lists', '{"a": [{"anything-but": "x"}], "b": [{"anything-but": 3}], "c": [{"anything-but": ["x", "y"]}], "d": [{"anything-but": [1, 2]}]}'],
    ['anything-but with an operator', '{"a": [{"anything-but": {"prefix": "tmp/"}}], "b": [{"anything-but": {"equals-ignore-case": ["X", "Y"]}}]}'],
    ['$or of two patterns', '{"$or": [{"type": ["a"]}, {"data": {"n": [{"numeric": ["<", 1]}]}}]}'],
    ['a field named like an operator outside $or', '{"data": {"prefix": ["x"]}}'],
  ])('%s', (_, text) => {
    expect(checkPattern(text)).toEqual([]);
  });
});

describe('checkPattern refuses', () => {
  it.each([
    ['an empty text', '  ', '', 'event pattern is empty'],
    ['an array', '["order.created"]', '', 'event pattern must be a JSON object'],
    ['an empty pattern', '{}', '', 'event pattern must name at least one field'],
    ['a value not in an array', '{"type": "order.created"}', 'type', 'the value must be an array of allowed values, such as ["order.created"]'],
    ['a number not in an array', '{"data": {"n": 5}}', 'data.n', 'such as [5]'],
    ['an empty array', '{"type": []}', 'type', 'an empty array matches nothing'],
    ['an empty object', '{"data": {}}', 'data', 'must not be empty'],
    ['nested arrays', '{"type": [["a"]]}', 'type[0]', 'arrays cannot be nested'],
    ['an unknown operator', '{"type": [{"begins": "a"}]}', 'type[0].begins', 'unknown operator "begins"; the operators are prefix, suffix, equals-ignore-case, anything-but, numeric, exists, cidr, wildcard'],
    ['"exactly", which the server does not support', '{"type": [{"exactly": "a"}]}', 'type[0].exactly', 'unknown operator "exactly"'],
    ['an operator object of two keys', '{"type": [{"prefix": "a", "suffix": "b"}]}', 'type[0]', 'exactly one key'],
    ['prefix of a number', '{"type": [{"prefix": 1}]}', 'type[0].prefix', 'prefix takes a string or {"equals-ignore-case": "…"}'],
    ['suffix of another operator', '{"type": [{"suffix": {"wildcard": "a"}}]}', 'type[0].suffix', 'suffix takes a string'],
    ['equals-ignore-case of a list', '{"type": [{"equals-ignore-case": ["a"]}]}', 'type[0].equals-ignore-case', 'takes a string'],
    ['wildcard of a number', '{"type": [{"wildcard": 1}]}', 'type[0].wildcard', 'wildcard takes a string'],
    ['cidr of a list', '{"ip": [{"cidr": ["10.0.0.0/8"]}]}', 'ip[0].cidr', 'cidr takes a string'],
    ['exists of a string', '{"a": [{"exists": "true"}]}', 'a[0].exists', 'exists takes true or false'],
    ['numeric of a number', '{"a": [{"numeric": 5}]}', 'a[0].numeric', 'numeric takes an array of comparisons'],
    ['numeric of three items', '{"a": [{"numeric": [">", 0, "<"]}]}', 'a[0].numeric', 'numeric takes an array of comparisons'],
    ['numeric with a string to compare', '{"a": [{"numeric": [">", "5"]}]}', 'a[0].numeric[1]', 'numeric compares with numbers only'],
    ['numeric with an unknown comparison', '{"a": [{"numeric": ["!=", 5]}]}', 'a[0].numeric[0]', 'unknown comparison "!="'],
    ['numeric with two lower bounds', '{"a": [{"numeric": [">", 0, ">=", 5]}]}', 'a[0].numeric[2]', 'at most one lower bound'],
    ['numeric "=" combined', '{"a": [{"numeric": ["=", 0, "<", 5]}]}', 'a[0].numeric[0]', '"=" cannot be combined'],
    ['an empty numeric range', '{"a": [{"numeric": [">", 5, "<", 1]}]}', 'a[0].numeric', 'the range is empty'],
    ['a numeric range of one value', '{"a": [{"numeric": [">=", 5, "<=", 5]}]}', 'a[0].numeric', 'use ["=", 5]'],
    ['an empty anything-but list', '{"a": [{"anything-but": []}]}', 'a[0].anything-but', 'must not be empty'],
    ['a mixed anything-but list', '{"a": [{"anything-but": ["x", 1]}]}', 'a[0].anything-but', 'only strings or only numbers'],
    ['anything-but of true', '{"a": [{"anything-but": true}]}', 'a[0].anything-but', 'anything-but takes a string'],
    ['anything-but with numeric', '{"a": [{"anything-but": {"numeric": [">", 1]}}]}', 'a[0].anything-but.numeric', 'not "numeric"'],
    ['anything-but prefix of an empty string', '{"a": [{"anything-but": {"prefix": ""}}]}', 'a[0].anything-but.prefix', 'must not be empty'],
    ['$or of one pattern', '{"$or": [{"type": ["a"]}]}', '$or', '$or takes an array of at least two objects'],
    ['$or of a value', '{"$or": [{"type": ["a"]}, "b"]}', '$or[1]', '$or takes an array'],
    ['a mistake inside $or', '{"$or": [{"type": ["a"]}, {"source": "b"}]}', '$or[1].source', 'the value must be an array'],
    ['an operator name as a field inside $or', '{"$or": [{"numeric": [">", 0]}, {"prefix": ["a"]}]}', '$or[0].numeric', 'operator name'],
    ['a number too large', '{"a": [1e400]}', 'a[0]', 'number out of range'],
  ])('%s', (_, text, path, message) => {
    const problems = checkPattern(text);
    expect(problems.some((p) => p.path === path && p.message.includes(message)), JSON.stringify(problems)).toBe(true);
  });

  it('says every problem, not only the first', () => {
    expect(checkPattern('{"type": "a", "source": [], "data": {"n": [{"numeric": 1}]}}').map((p) => p.path)).toEqual(['type', 'source', 'data.n[0].numeric']);
  });

  it('writes a problem on one line, with its path', () => {
    expect(checkPattern('{"type": "order.created"}').map(problemText)).toEqual(['type: the value must be an array of allowed values, such as ["order.created"]']);
  });
});

describe('checkPattern on text that is not JSON', () => {
  it('says where the parser stopped, from the position the browser gives', () => {
    const [p] = checkPattern('{\n  "type": ["a"\n  "source": ["b"]\n}');
    expect(p.message).toMatch(/^event pattern is not JSON: /);
    // V8 (Node, Chrome) gives a position; other engines may not, and then no line is said.
    if (p.line !== undefined) {
      expect([p.line, p.column]).toEqual([3, 3]);
      expect(p.message).toMatch(/at line 3, column 3$/);
    }
  });

  it.each([
    ['V8 with a position', "Expected ',' or ']' after array element in JSON at position 14", 'x\ny\nzzzzzzzzzzzzzzzzz', [3, 11], "Expected ',' or ']' after array element at line 3, column 11"],
    ['V8 with line and column', "Expected ',' or '}' in JSON at position 9 (line 2 column 5)", '', [2, 5], "Expected ',' or '}' at line 2, column 5"],
    ['Firefox', "JSON.parse: expected ',' or '}' after property value in object at line 4 column 1 of the JSON data", '', [4, 1], "expected ',' or '}' after property value in object at line 4, column 1"],
    ['V8 without a position', 'Unexpected token \'}\', "{"a": }" is not valid JSON', '', [undefined, undefined], "Unexpected token '}'"],
  ])('reads %s', (_, raw, text, [line, column], said) => {
    // The browser's message is what JSON.parse would throw; checkPattern is given a text that makes it throw it.
    const parse = JSON.parse;
    JSON.parse = () => {
      throw new SyntaxError(raw);
    };
    try {
      const [p] = checkPattern(text || '{');
      expect([p.line, p.column]).toEqual([line, column]);
      expect(p.message).toBe(`event pattern is not JSON: ${said}`);
    } finally {
      JSON.parse = parse;
    }
  });
});
