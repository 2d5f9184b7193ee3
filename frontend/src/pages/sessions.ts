import type { UserSession } from '../api/client';

/**
 * browserOf names the browser and system of a User-Agent header in a few words ("Firefox 128 on Linux",
 * "Chrome 140 on Windows", "curl 8.14"), for the list of a user's sessions; a header it does not recognise is
 * answered as it is, cut to 60 characters, and an empty one as "unknown".
 */
export function browserOf(ua: string | undefined): string {
  const s = (ua ?? '').trim();
  if (s === '') return 'unknown';
  const version = (re: RegExp) => re.exec(s)?.[1]?.split('.')[0];
  // Order matters: Edge and Opera also say Chrome, Chrome also says Safari.
  const browsers: [string, RegExp][] = [
    ['Edge', /\bEdg(?:e|A|iOS)?\/([\d.]+)/],
    ['Opera', /\bOPR\/([\d.]+)/],
    ['Firefox', /\bFirefox\/([\d.]+)/],
    ['Headless Chrome', /\bHeadlessChrome\/([\d.]+)/],
    ['Chromium', /\bChromium\/([\d.]+)/],
    ['Chrome', /\b(?:Chrome|CriOS)\/([\d.]+)/],
    ['Safari', /\bVersion\/([\d.]+).*\bSafari\//],
  ];
  let name: string | undefined;
  for (const [n, re] of browsers) {
    const v = version(re);
    if (v !== undefined) {
      name = `${n} ${v}`;
      break;
    }
  }
  if (name === undefined) {
    const tool = /^(curl|Wget|python-requests|Go-http-client|node-fetch|undici|PostmanRuntime|HTTPie)\/([\d.]+)/i.exec(s);
    if (tool) return `${tool[1]} ${tool[2]}`;
    return s.length > 60 ? s.slice(0, 59) + '…' : s;
  }
  const systems: [string, RegExp][] = [
    ['Android', /\bAndroid\b/],
    ['iOS', /\b(?:iPhone|iPad|iPod)\b/],
    ['ChromeOS', /\bCrOS\b/],
    ['Windows', /\bWindows\b/],
    ['macOS', /\bMac OS X\b/],
    ['Linux', /\bLinux\b/],
  ];
  const system = systems.find(([, re]) => re.test(s))?.[0];
  return system ? `${name} on ${system}` : name;
}

/** endsAt is when a session ends unless it is used again: the earlier of its idle end and its absolute end. */
export function endsAt(s: UserSession): string | undefined {
  const ends = [s.idleExpiresAt, s.expiresAt].filter((t): t is string => !!t && !Number.isNaN(Date.parse(t)));
  if (ends.length === 0) return undefined;
  return ends.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b));
}
