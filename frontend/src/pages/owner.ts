/**
 * ownerOf says in words what a connector runs, from its name (connectorOwner): a bus's router, a source, a replay or
 * a target, with their names read back; other connectors (a worker's own) have no owner here.
 */
export function ownerOf(name: string): string {
  const o = connectorOwner(name);
  switch (o?.kind) {
    case 'router':
      return `router of bus ${o.bus}`;
    case 'source':
      return `source ${o.name} of bus ${o.bus}`;
    case 'replay':
      return `replay ${o.name} of bus ${o.bus}`;
    case 'target':
      return `target ${o.name} of rule ${o.rule} on bus ${o.bus}`;
    default:
      return '';
  }
}

export type ConnectorKind = 'target' | 'source' | 'router' | 'replay';

/**
 * ConnectorOwner is what a connector runs, read from its name (adapter/connect names.go, domain.ConnectorPart):
 * eb.<account>.<bus>.router, eb.<account>.<bus>.source.<source>, eb.<account>.<bus>.=replay.<replay> or
 * eb.<account>.<bus>.<rule>.<target>. Dots and slashes in names are escaped in a part (=2E, =2F) and read back; a
 * part too long to be kept whole (it ends with =<hash>) is kept as it is, and whole is false.
 */
export interface ConnectorOwner {
  kind: ConnectorKind;
  bus: string;
  /** name is the target's, source's or replay's; rule the target's rule. */
  name?: string;
  rule?: string;
  whole: boolean;
}

/** nameOfPart reads a name back from its part; undefined for a shortened one. */
function nameOfPart(p: string): string | undefined {
  const name = p.replace(/=2E/g, '.').replace(/=2F/g, '/');
  return name.includes('=') ? undefined : name;
}

/** connectorOwner reads what a connector runs from its name; undefined for one that is no bus's (a worker's own). */
export function connectorOwner(connector: string): ConnectorOwner | undefined {
  const p = connector.split('.');
  if (p[0] !== 'eb' || p.length < 4 || p.length > 5) return undefined;
  const names = p.slice(2).map(nameOfPart);
  const whole = (...i: number[]) => i.every((k) => names[k] !== undefined);
  const text = (k: number) => names[k] ?? p[k + 2];
  if (p.length === 4) return p[3] === 'router' ? { kind: 'router', bus: text(0), whole: whole(0) } : undefined;
  if (p[3] === 'source') return { kind: 'source', bus: text(0), name: text(2), whole: whole(0, 2) };
  if (p[3] === '=replay') return { kind: 'replay', bus: text(0), name: text(2), whole: whole(0, 2) };
  return { kind: 'target', bus: text(0), rule: text(1), name: text(2), whole: whole(0, 1, 2) };
}

