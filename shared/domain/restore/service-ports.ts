/**
 * Which of a Service's node ports a restore keeps, as Velero's Service restore item action
 * decides (service_action.go deleteNodePorts, deleteHealthCheckNodePort): a port the user set
 * explicitly is kept, one the cluster assigned is dropped so the new cluster assigns its own.
 * "Explicitly" means named in the `kubectl.kubernetes.io/last-applied-configuration`
 * annotation (client-side apply) or, when there is no such annotation, owned in
 * `metadata.managedFields` (server-side apply, or any manager that sent the field).
 * Pure: changes only the spec it is given, never reads the cluster.
 */

type Json = Record<string, unknown>;

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/** The Service as backed up: its annotations and managed fields say what was set explicitly. */
export interface ServiceOrigin {
  readonly annotations: Json;
  readonly managedFields: unknown;
}

/** Velero parses the annotation strictly; a malformed one keeps nothing (its error aside). */
function lastApplied(origin: ServiceOrigin): Json | undefined {
  const raw = origin.annotations[LAST_APPLIED];
  if (typeof raw !== 'string') return undefined;
  try {
    return obj(JSON.parse(raw));
  } catch {
    return {};
  }
}

/** Each managed-fields entry's `fieldsV1` (`f:spec` …), as Velero reads it. */
function managedSpecs(origin: ServiceOrigin): Json[] {
  const entries = Array.isArray(origin.managedFields) ? origin.managedFields : [];
  return entries.map((entry) => obj(obj(obj(entry).fieldsV1)['f:spec']));
}

function portNumber(value: unknown): number {
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value === 'string') return Number.parseInt(value, 10) || 0;
  return 0;
}

/** The ports of the last-applied configuration that set a node port: by name, or by number. */
function appliedNodePorts(applied: Json): { names: Set<string>; unnamed: Set<number> } {
  const names = new Set<string>();
  const unnamed = new Set<number>();
  const ports = obj(applied.spec).ports;
  for (const entry of Array.isArray(ports) ? ports : []) {
    const port = obj(entry);
    if (!('nodePort' in port) || portNumber(port.nodePort) <= 0) continue;
    if (typeof port.name === 'string') names.add(port.name);
    else unnamed.add(portNumber(port.nodePort));
  }
  return { names, unnamed };
}

/** Server-side apply keys a port by `k:{"port":80,"protocol":"TCP"}`. */
function managedNodePortKeys(origin: ServiceOrigin): Set<string> {
  const keys = new Set<string>();
  for (const spec of managedSpecs(origin)) {
    for (const [key, fields] of Object.entries(obj(spec['f:ports']))) {
      if ('f:nodePort' in obj(fields)) keys.add(key);
    }
  }
  return keys;
}

function keptPorts(ports: readonly unknown[], origin: ServiceOrigin): unknown[] {
  const applied = lastApplied(origin);
  const explicit = applied ? appliedNodePorts(applied) : undefined;
  const managed = applied ? undefined : managedNodePortKeys(origin);
  return ports.map((entry) => {
    const port = obj(entry);
    const kept = explicit
      ? typeof port.name === 'string' && port.name !== ''
        ? explicit.names.has(port.name)
        : explicit.unnamed.has(portNumber(port.nodePort))
      : managed?.has(`k:{"port":${portNumber(port.port)},"protocol":"${String(port.protocol ?? '')}"}`);
    if (kept) return port;
    const { nodePort: _assigned, ...rest } = port;
    return rest;
  });
}

/** Velero keeps a LoadBalancer's health-check node port only where the user set it. */
function keepsHealthCheckNodePort(spec: Json, origin: ServiceOrigin): boolean {
  if (spec.type !== 'LoadBalancer' || spec.externalTrafficPolicy !== 'Local') return true;
  const applied = lastApplied(origin);
  if (applied && portNumber(obj(applied.spec).healthCheckNodePort) !== 0) return true;
  return managedSpecs(origin).some((s) => 'f:healthCheckNodePort' in s);
}

/**
 * The node ports (and health-check node port) the new cluster must assign, removed from `spec`
 * in place. An ExternalName Service has none to reset.
 */
export function resetAssignedNodePorts(spec: Json, origin: ServiceOrigin): void {
  if (spec.type !== 'ExternalName' && Array.isArray(spec.ports)) {
    spec.ports = keptPorts(spec.ports, origin);
  }
  if (!keepsHealthCheckNodePort(spec, origin)) delete spec.healthCheckNodePort;
}
