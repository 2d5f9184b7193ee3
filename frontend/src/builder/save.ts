import { api, enc, type Target } from '../api/client';
import { ApiError } from '../api/problem';
import type { Conversion } from './convert';

/**
 * saveChannel writes a converted graph through the REST API, as a client would: the bus (created when it does
 * not exist), its sources (created or replaced), then the rule. A new rule is created with its targets in one
 * POST; an existing one is replaced, its targets replaced one by one, and the targets no longer in the graph
 * deleted. previousTargets are the names the rule had when it was loaded.
 */
export async function saveChannel(c: Conversion, existing: boolean, previousTargets: string[]): Promise<void> {
  const bus = `/buses/${enc(c.bus)}`;
  try {
    await api(bus);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 404)) throw e;
    await api('/buses', { body: { name: c.bus } });
  }
  for (const s of c.sources) {
    await api(`${bus}/sources/${enc(s.name ?? '')}`, { method: 'PUT', body: s });
  }
  const rulePath = `${bus}/rules/${enc(c.rule.name ?? '')}`;
  if (!existing) {
    await api(`${bus}/rules`, { body: c.rule });
    return;
  }
  const { targets, ...rule } = c.rule;
  await api(rulePath, { method: 'PUT', body: rule });
  for (const t of targets as Target[]) {
    await api(`${rulePath}/targets/${enc(t.name ?? '')}`, { method: 'PUT', body: t });
  }
  const keep = new Set(targets.map((t) => t.name));
  for (const name of previousTargets) {
    if (!keep.has(name)) await api(`${rulePath}/targets/${enc(name)}`, { method: 'DELETE' });
  }
}
