/**
 * heartbeatAge says how long ago a worker's last heartbeat was stored, from the API's lastHeartbeat (RFC 3339) and
 * the time now: "0.4 s ago", "12 s ago", "3 min ago"; "unknown" when the runtime does not report it. A clock
 * ahead of the browser's reads as "just now".
 */
export function heartbeatAge(lastHeartbeat: string | undefined, now: Date): string {
  if (!lastHeartbeat) return 'unknown';
  const t = Date.parse(lastHeartbeat);
  if (Number.isNaN(t)) return 'unknown';
  const ms = now.getTime() - t;
  if (ms < 100) return 'just now';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s ago`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s ago`;
  return `${Math.round(ms / 60_000)} min ago`;
}
