/**
 * The check of an event pattern as the user types it, before the server compiles it: the mistakes a person makes
 * (a value not in an array, an unknown operator, a numeric range the wrong way round) said in words, each at its
 * place in the pattern. It follows the control plane's compiler (domain/pattern/compile.go), which follows Amazon
 * EventBridge's pattern language; limits that only the server knows (size, depth, number of values, wildcard
 * complexity) are left to it. Pure.
 */

export interface PatternProblem {
  /** path is where the problem is: keys joined with ".", array indexes in brackets ("data.amount[0].numeric"); "" for the whole pattern. */
  path: string;
  message: string;
  /** line and column (from 1) locate a JSON syntax error, when the browser says where it is. */
  line?: number;
  column?: number;
}

/** OPERATORS are the operators an element of a value array may use, each an object of one key. */
export const OPERATORS = ['prefix', 'suffix', 'equals-ignore-case', 'anything-but', 'numeric', 'exists', 'cidr', 'wildcard'] as const;

// Names the server refuses as field names inside a branch of $or, as event-ruler does: they are taken for
// operators written in the wrong place (compile.go reservedInOr).
const RESERVED_IN_OR = new Set<string>([
  ...OPERATORS,
  'exactly',
  '=',
  '<',
  '<=',
  '>',
  '>=',
  'regex',
  'not-wildcard',
  'not-equals-ignore-case',
  'date-after',
  'date-on-or-after',
  'date-before',
  'date-on-or-before',
  'in-date-range',
  'ip-address-in-range',
  'ip-address-not-in-range',
]);

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/** problemText is a problem as one line: "data.amount: the value must be …". */
export function problemText(p: PatternProblem): string {
  return p.path === '' ? p.message : `${p.path}: ${p.message}`;
}

/** checkPattern returns the problems of the pattern's JSON text; none when the server should accept it. */
export function checkPattern(text: string): PatternProblem[] {
  if (text.trim() === '') return [{ path: '', message: 'event pattern is empty' }];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return [syntaxProblem(text, (e as Error).message)];
  }
  if (!isObject(value)) return [{ path: '', message: 'event pattern must be a JSON object, such as {"type": ["order.created"]}' }];
  const out: PatternProblem[] = [];
  if (Object.keys(value).length === 0) out.push({ path: '', message: 'event pattern must name at least one field, such as {"type": ["order.created"]}' });
  else checkObject(value, '', false, out);
  return out;
}

/**
 * syntaxProblem says where JSON.parse stopped. Browsers say it in their own words: V8 "… in JSON at position 14"
 * (newer ones add "(line 3 column 3)") or "Unexpected token '}', "…" is not valid JSON" (no place), Firefox
 * "JSON.parse: … at line 3 column 3 of the JSON data"; Safari says no place.
 */
function syntaxProblem(text: string, raw: string): PatternProblem {
  let reason = raw;
  let line: number | undefined;
  let column: number | undefined;
  let m: RegExpExecArray | null;
  if ((m = /^JSON\.parse: (.*) at line (\d+) column (\d+) of the JSON data$/s.exec(raw))) {
    [reason, line, column] = [m[1], Number(m[2]), Number(m[3])];
  } else if ((m = /^(.*) in JSON at position (\d+)(?: \(line (\d+) column (\d+)\))?$/s.exec(raw))) {
    reason = m[1];
    if (m[3]) [line, column] = [Number(m[3]), Number(m[4])];
    else {
      const before = text.slice(0, Number(m[2])).split('\n');
      [line, column] = [before.length, before[before.length - 1].length + 1];
    }
  } else if ((m = /^(.*?), ".*" is not valid JSON$/s.exec(raw))) {
    // The rest echoes the whole text back: the token is enough.
    reason = m[1];
  }
  const where = line !== undefined ? ` at line ${line}, column ${column}` : '';
  return { path: '', message: `event pattern is not JSON: ${reason}${where}`, line, column };
}

function checkObject(obj: Obj, path: string, inOr: boolean, out: PatternProblem[]) {
  for (const [key, v] of Object.entries(obj)) {
    const p = join(path, key);
    if (key === '$or') {
      checkOr(v, p, out);
      continue;
    }
    if (inOr && RESERVED_IN_OR.has(key)) {
      out.push({ path: p, message: `"${key}" is an operator name, which cannot be a field name inside $or` });
      continue;
    }
    if (Array.isArray(v)) checkValues(v, p, out);
    else if (isObject(v)) {
      if (Object.keys(v).length === 0) out.push({ path: p, message: 'an object in a pattern must not be empty' });
      else checkObject(v, p, inOr, out);
    } else {
      out.push({ path: p, message: `the value must be an array of allowed values, such as ${JSON.stringify([v])}` });
    }
  }
}

function checkOr(v: unknown, path: string, out: PatternProblem[]) {
  const usage = '$or takes an array of at least two objects (patterns), such as [{"type": ["a"]}, {"source": ["b"]}]';
  if (!Array.isArray(v) || v.length < 2) {
    out.push({ path, message: usage });
    return;
  }
  v.forEach((branch, i) => {
    const p = `${path}[${i}]`;
    if (!isObject(branch)) out.push({ path: p, message: usage });
    else if (Object.keys(branch).length === 0) out.push({ path: p, message: 'an object in a pattern must not be empty' });
    // Shown under the branch ("$or[0].type"), as the server says it, though the fields are at the $or's level.
    else checkObject(branch, p, true, out);
  });
}

function checkValues(values: unknown[], path: string, out: PatternProblem[]) {
  if (values.length === 0) {
    out.push({ path, message: 'an empty array matches nothing: list at least one allowed value' });
    return;
  }
  values.forEach((v, i) => {
    const p = `${path}[${i}]`;
    if (typeof v === 'number' && !Number.isFinite(v)) out.push({ path: p, message: 'number out of range' });
    else if (Array.isArray(v)) out.push({ path: p, message: 'arrays cannot be nested in a pattern: list the allowed values in one array' });
    else if (isObject(v)) checkOperator(v, p, out);
  });
}

const ONE_KEY = 'an operator object must have exactly one key, such as {"prefix": "order."}';

function checkOperator(o: Obj, path: string, out: PatternProblem[]) {
  const keys = Object.keys(o);
  if (keys.length !== 1) {
    out.push({ path, message: ONE_KEY });
    return;
  }
  const name = keys[0];
  const arg = o[name];
  const p = join(path, name);
  const problem = (message: string): void => void out.push({ path: p, message });
  switch (name) {
    case 'prefix':
    case 'suffix':
      if (typeof arg === 'string') return;
      if (isObject(arg) && Object.keys(arg).length === 1 && typeof arg['equals-ignore-case'] === 'string') return;
      return problem(`${name} takes a string or {"equals-ignore-case": "…"}`);
    case 'equals-ignore-case':
      if (typeof arg !== 'string') problem('equals-ignore-case takes a string');
      return;
    case 'wildcard':
      if (typeof arg !== 'string') problem('wildcard takes a string, such as "order.*"');
      return;
    case 'cidr':
      if (typeof arg !== 'string') problem('cidr takes a string, such as "10.0.0.0/24"');
      return;
    case 'exists':
      if (typeof arg !== 'boolean') problem('exists takes true or false');
      return;
    case 'numeric':
      return checkNumeric(arg, p, out);
    case 'anything-but':
      return checkAnythingBut(arg, p, out);
    default:
      return problem(`unknown operator "${name}"; the operators are ${OPERATORS.join(', ')}`);
  }
}

const NUMERIC_USAGE = 'numeric takes an array of comparisons, such as [">", 0, "<=", 5], ["<", 10] or ["=", 5]';
const BOUNDS = 'numeric takes at most one lower bound (> or >=) and one upper bound (< or <=)';

function checkNumeric(arg: unknown, path: string, out: PatternProblem[]) {
  if (!Array.isArray(arg) || (arg.length !== 2 && arg.length !== 4)) {
    out.push({ path, message: NUMERIC_USAGE });
    return;
  }
  let lower: { n: number; open: boolean } | undefined;
  let upper: { n: number; open: boolean } | undefined;
  for (let i = 0; i < arg.length; i += 2) {
    const [op, n] = [arg[i], arg[i + 1]];
    const at = `${path}[${i}]`;
    if (typeof op !== 'string') return void out.push({ path: at, message: NUMERIC_USAGE });
    if (typeof n !== 'number') return void out.push({ path: `${path}[${i + 1}]`, message: 'numeric compares with numbers only' });
    if (!Number.isFinite(n)) return void out.push({ path: `${path}[${i + 1}]`, message: 'number out of range' });
    switch (op) {
      case '=':
        if (arg.length !== 2) return void out.push({ path: at, message: '"=" cannot be combined with another comparison' });
        return;
      case '>':
      case '>=':
        if (lower) return void out.push({ path: at, message: BOUNDS });
        lower = { n, open: op === '>' };
        break;
      case '<':
      case '<=':
        if (upper) return void out.push({ path: at, message: BOUNDS });
        upper = { n, open: op === '<' };
        break;
      default:
        return void out.push({ path: at, message: `unknown comparison "${op}"; use =, <, <=, > or >=` });
    }
  }
  if (!lower || !upper) return;
  if (lower.n > upper.n || (lower.n === upper.n && (lower.open || upper.open))) {
    out.push({ path, message: `the range is empty: its lower bound ${lower.n} is not below its upper bound ${upper.n}` });
  } else if (lower.n === upper.n) {
    out.push({ path, message: `the range has the same lower and upper bound: use ["=", ${lower.n}]` });
  }
}

const ANYTHING_BUT_USAGE = 'anything-but takes a string, a number, a list of strings or of numbers, or an object with prefix, suffix, equals-ignore-case or wildcard';

function checkAnythingBut(arg: unknown, path: string, out: PatternProblem[]) {
  if (typeof arg === 'string') return;
  if (typeof arg === 'number') {
    if (!Number.isFinite(arg)) out.push({ path, message: 'number out of range' });
    return;
  }
  if (Array.isArray(arg)) {
    if (arg.length === 0) return void out.push({ path, message: 'an anything-but list must not be empty' });
    const bad = arg.findIndex((x) => typeof x !== 'string' && typeof x !== 'number');
    if (bad >= 0) return void out.push({ path: `${path}[${bad}]`, message: 'an anything-but list holds strings or numbers' });
    if (arg.some((x) => typeof x === 'string') && arg.some((x) => typeof x === 'number')) {
      out.push({ path, message: 'an anything-but list holds only strings or only numbers' });
    }
    return;
  }
  if (!isObject(arg)) return void out.push({ path, message: ANYTHING_BUT_USAGE });
  const keys = Object.keys(arg);
  if (keys.length !== 1) return void out.push({ path, message: ONE_KEY });
  const name = keys[0];
  const p = join(path, name);
  if (!['prefix', 'suffix', 'equals-ignore-case', 'wildcard'].includes(name)) {
    return void out.push({ path: p, message: `anything-but takes prefix, suffix, equals-ignore-case or wildcard, not "${name}"` });
  }
  const sub = arg[name];
  const list = typeof sub === 'string' ? [sub] : Array.isArray(sub) && sub.length > 0 && sub.every((x) => typeof x === 'string') ? (sub as string[]) : undefined;
  if (!list) return void out.push({ path: p, message: `anything-but ${name} takes a string or a list of strings` });
  if ((name === 'prefix' || name === 'suffix') && list.includes('')) out.push({ path: p, message: `anything-but ${name} must not be empty` });
}
