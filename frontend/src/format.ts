/**
 * Values shown in words a person reads: Go durations as days, hours and minutes, byte counts in binary units,
 * times relative to now with the exact time for a tooltip, and field names in sentence case. Pure: no React here.
 */

const NS_PER: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/**
 * parseGoDuration reads a duration as Go's time.Duration.String writes it and time.ParseDuration accepts it
 * ("72h0m0s", "1h30m", "1.5h", "500ms", "-2m", "0"), in milliseconds; undefined when it is not one.
 */
export function parseGoDuration(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  let t = s.trim();
  let sign = 1;
  if (t.startsWith('-') || t.startsWith('+')) {
    if (t[0] === '-') sign = -1;
    t = t.slice(1);
  }
  if (t === '0') return 0;
  if (t === '') return undefined;
  const part = /([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)/y;
  let ns = 0;
  let at = 0;
  while (at < t.length) {
    part.lastIndex = at;
    const m = part.exec(t);
    if (!m || m[1] === '' || m[1] === '.') return undefined;
    ns += Number(m[1]) * NS_PER[m[2]];
    at = part.lastIndex;
  }
  return (sign * ns) / 1e6;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** trimmed writes n with at most digits decimals and no trailing zeros: 1.5, 2, 0.25. */
function trimmed(n: number, digits: number): string {
  return String(Number(n.toFixed(digits)));
}

/**
 * durationText writes a number of milliseconds in the largest units that say it exactly, at most three of them:
 * "3 days", "1 h 30 min", "2 min 5 s", "500 ms", "0 s". A negative duration gets a minus sign.
 */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return '−' + durationText(-ms);
  if (ms === 0) return '0 s';
  if (ms < 1000) return `${trimmed(ms, 3)} ms`;
  const units: [number, (n: number) => string][] = [
    [86_400_000, (n) => plural(n, 'day', 'days')],
    [3_600_000, (n) => `${n} h`],
    [60_000, (n) => `${n} min`],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [size, text] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(text(n));
    rest -= n * size;
  }
  if (rest > 0) parts.push(`${trimmed(rest / 1000, 3)} s`);
  return parts.slice(0, 3).join(' ');
}

/** goDurationText writes a Go duration string in words ("72h0m0s" → "3 days"); text it cannot read is kept. */
export function goDurationText(s: string | undefined): string {
  if (s === undefined || s === '') return '';
  const ms = parseGoDuration(s);
  return ms === undefined ? s : durationText(ms);
}

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/**
 * bytesText writes a byte count in binary units with at most one decimal: "0 bytes", "1 byte", "1023 bytes",
 * "1.5 KiB", "1 GiB". A count that rounds up to 1024 of a unit is written in the next one ("1 MiB", not
 * "1024 KiB").
 */
export function bytesText(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '';
  if (n < 0) return '−' + bytesText(-n);
  if (n < 1024) return plural(Math.round(n), 'byte', 'bytes');
  let v = n;
  let unit = -1;
  while (unit < BYTE_UNITS.length - 1 && Number(v.toFixed(1)) >= 1024) {
    v /= 1024;
    unit++;
  }
  return `${trimmed(v, 1)} ${BYTE_UNITS[unit]}`;
}

/** retentionText says a bus's retention: "3 days", "1 GiB", "3 days or 1 GiB, whichever comes first". */
export function retentionText(r: { maxAge?: string; maxBytes?: number } | undefined): string {
  const age = goDurationText(r?.maxAge);
  const size = r?.maxBytes ? bytesText(r.maxBytes) : '';
  if (age && size) return `${age} or ${size}, whichever comes first`;
  return age || size;
}

/**
 * relativeTime says how far an RFC 3339 time is from now: "just now" within 5 seconds, then "12 s ago",
 * "3 min ago", "5 h ago", "2 days ago", "3 months ago", "2 years ago"; in the future "in 3 min". "" for none; the
 * text itself when it is not a time.
 */
export function relativeTime(t: string | undefined, now: Date): string {
  if (!t) return '';
  const at = Date.parse(t);
  if (Number.isNaN(at)) return t;
  const diff = now.getTime() - at;
  const past = diff >= 0;
  const s = Math.abs(diff) / 1000;
  if (s < 5) return 'just now';
  let text: string;
  if (s < 60) text = `${Math.floor(s)} s`;
  else if (s < 3600) text = `${Math.floor(s / 60)} min`;
  else if (s < 86_400) text = `${Math.floor(s / 3600)} h`;
  else if (s < 60 * 86_400) text = plural(Math.floor(s / 86_400), 'day', 'days');
  else if (s < 365 * 86_400) text = plural(Math.floor(s / (30 * 86_400)), 'month', 'months');
  else text = plural(Math.floor(s / (365 * 86_400)), 'year', 'years');
  return past ? `${text} ago` : `in ${text}`;
}

/**
 * exactTime writes an RFC 3339 time in full, to the second, with its zone: the tooltip of a relative time. locale
 * and timeZone default to the browser's. "" for none; the text itself when it is not a time.
 */
export function exactTime(t: string | undefined, opts: { locale?: string; timeZone?: string } = {}): string {
  if (!t) return '';
  const at = Date.parse(t);
  if (Number.isNaN(at)) return t;
  return new Intl.DateTimeFormat(opts.locale, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'short',
    timeZone: opts.timeZone,
  }).format(at);
}

// Words written in capitals wherever they stand in a label.
const ACRONYMS: Record<string, string> = {
  api: 'API',
  arn: 'ARN',
  ca: 'CA',
  cron: 'cron',
  dlq: 'DLQ',
  http: 'HTTP',
  https: 'HTTPS',
  id: 'ID',
  ids: 'IDs',
  json: 'JSON',
  mqtt: 'MQTT',
  oauth: 'OAuth',
  qos: 'QoS',
  tls: 'TLS',
  ttl: 'TTL',
  uri: 'URI',
  url: 'URL',
  urls: 'URLs',
};

/**
 * fieldLabel turns a config key into a label in sentence case: "url" → "URL", "auth.oauth.client_id" →
 * "Auth OAuth client ID", "maxRetries" → "Max retries", "schedule.cron" → "Schedule cron".
 */
export function fieldLabel(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s._-]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
  return words
    .map((w, i) => {
      const a = ACRONYMS[w];
      if (a) return i === 0 ? a[0].toUpperCase() + a.slice(1) : a;
      return i === 0 ? w[0].toUpperCase() + w.slice(1) : w;
    })
    .join(' ');
}
