/**
 * ownerOf says in words what a connector runs, from its name (adapter/connect names.go): eb.<account>.<bus>.router
 * is a bus's router, eb.<account>.<bus>.source.<source> a source, eb.<account>.<bus>.<rule>.<target> a target;
 * other connectors (a worker's own) have no owner here.
 */
export function ownerOf(name: string): string {
  const p = name.split('.');
  if (p[0] !== 'eb' || p.length < 4) return '';
  if (p.length === 4 && p[3] === 'router') return `router of bus ${p[2]}`;
  if (p.length === 5 && p[3] === 'source') return `source ${p[4]} of bus ${p[2]}`;
  if (p.length === 5) return `target ${p[4]} of rule ${p[3]} on bus ${p[2]}`;
  return `bus ${p[2]}`;
}
