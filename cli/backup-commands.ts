/**
 * `lifeboat backup create|get|describe|delete`: Velero's flags, turned into a `velero.io/v1`
 * Backup request; with --local the backup runs in this process against the kubeconfig's cluster
 * and is written to --dir (volume data the data mover moves, into its repository there). Bad
 * flags are reported by name; no stack traces.
 */
import { parseArgs } from 'node:util';
import { stringify as toYaml } from 'yaml';
import { deleteBackup } from '../functions/delete-backup/delete-backup.js';
import { ebsSnapshotterFor } from '../shared/adapters/aws-adapters.js';
import { clusterFromKubeconfig } from '../shared/adapters/kubernetes-cluster.js';
import { ExecutionFailed } from '../shared/adapters/local-state-machine.js';
import { repackDeadFraction } from '../shared/contracts/data-mover-job.js';
import { parseSelector } from '../shared/domain/kubernetes/label-selector.js';
import type { Snapshotter } from '../shared/ports/snapshotter.js';
import { csv, localStore, UsageError } from './flags.js';
import { listBackups, readBackup } from './local/backup-reader.js';
import { type ProgressEvent, runLocalBackup } from './local/backup-runtime.js';
import { collectGarbage, localRepository, repositoryKeyFile } from './local/local-data-mover.js';
import { renderBackupDescribe, renderBackupTable } from './render/backups.js';

const common = {
  local: { type: 'boolean' },
  dir: { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

/** Velero's `--ordered-resources 'pods=ns1/pod1,ns1/pod2;persistentvolumes=pv4'`. */
function orderedResources(text: string | undefined): Record<string, string> | undefined {
  if (!text) return undefined;
  const out: Record<string, string> = {};
  for (const part of text.split(';').filter(Boolean)) {
    const [resource, names] = part.split('=');
    if (!resource || !names) throw new UsageError(`--ordered-resources: "${part}" is not resource=ns/name,…`);
    out[resource.trim()] = names.trim();
  }
  return out;
}

function bool(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'true' || v === 'false') return v === 'true';
  throw new UsageError(`--${name} must be true or false`);
}

/** Velero's `--resource-policies-configmap NAME`; Lifeboat also takes `NAMESPACE/NAME`. */
function resourcePolicyFlag(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const [first, second, ...rest] = text.split('/');
  if (!first || rest.length > 0 || second === '')
    throw new UsageError(`--resource-policies-configmap: "${text}" is not [NAMESPACE/]NAME`);
  return second === undefined
    ? { kind: 'configmap', name: first }
    : { kind: 'configmap', namespace: first, name: second };
}

/** `backup create`'s flags: Velero's, and Lifeboat's own where marked. */
const createOptions = {
  ...common,
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  cluster: { type: 'string' },
  'include-namespaces': { type: 'string' },
  'exclude-namespaces': { type: 'string' },
  'include-resources': { type: 'string' },
  'exclude-resources': { type: 'string' },
  'include-cluster-resources': { type: 'string' },
  'include-cluster-scoped-resources': { type: 'string' },
  'exclude-cluster-scoped-resources': { type: 'string' },
  'include-namespace-scoped-resources': { type: 'string' },
  'exclude-namespace-scoped-resources': { type: 'string' },
  selector: { type: 'string', short: 'l' },
  'or-selector': { type: 'string' },
  'ordered-resources': { type: 'string' },
  ttl: { type: 'string' },
  labels: { type: 'string' },
  'snapshot-volumes': { type: 'string' },
  'snapshot-move-data': { type: 'string' },
  'default-volumes-to-fs-backup': { type: 'string' },
  'csi-snapshot-timeout': { type: 'string' },
  'item-operation-timeout': { type: 'string' },
  'resource-policies-configmap': { type: 'string' },
  /** Lifeboat: the region of the EBS volumes to snapshot (default: $AWS_REGION). */
  'snapshot-region': { type: 'string' },
  /** Lifeboat: the key file of the data mover's repository (docs/backup-volumes.md). */
  'repository-key-file': { type: 'string' },
} as const;

function parseCreateFlags(args: string[]) {
  return parseArgs({ args, allowPositionals: false, options: createOptions }).values;
}

type CreateFlags = ReturnType<typeof parseCreateFlags>;

export function backupRequestFromFlags(
  name: string | undefined,
  args: string[],
): { request: unknown; values: Record<string, unknown> } {
  const values = parseCreateFlags(args);
  if (!name) throw new UsageError('backup create needs a NAME');
  const selectors = labelSelectors(values);
  const labels = values.labels
    ? Object.fromEntries(csv(values.labels)?.map((l) => l.split('=') as [string, string]) ?? [])
    : undefined;
  return {
    request: {
      cluster: values.cluster ?? 'local',
      backup: {
        apiVersion: 'velero.io/v1',
        kind: 'Backup',
        metadata: { name, ...(labels ? { labels } : {}) },
        spec: backupSpec(values, selectors),
      },
    },
    values,
  };
}

/** `--selector` and `--or-selector` (alternatives split on ` or `), each checked by name. */
function labelSelectors(values: CreateFlags) {
  const selector = values.selector === undefined ? undefined : parseSelector(values.selector);
  if (values.selector !== undefined && !selector)
    throw new UsageError(`--selector: "${values.selector}" is not a label selector`);
  const orSelectors = values['or-selector']?.split(' or ').map((s) => {
    const parsed = parseSelector(s);
    if (!parsed) throw new UsageError(`--or-selector: "${s}" is not a label selector`);
    return parsed;
  });
  return { labelSelector: selector, orLabelSelectors: orSelectors };
}

/** The Backup's spec: only the fields a flag set, in Velero's names. */
function backupSpec(
  values: CreateFlags,
  selectors: ReturnType<typeof labelSelectors>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries({
      includedNamespaces: csv(values['include-namespaces']),
      excludedNamespaces: csv(values['exclude-namespaces']),
      includedResources: csv(values['include-resources']),
      excludedResources: csv(values['exclude-resources']),
      includeClusterResources: bool('include-cluster-resources', values['include-cluster-resources']),
      includedClusterScopedResources: csv(values['include-cluster-scoped-resources']),
      excludedClusterScopedResources: csv(values['exclude-cluster-scoped-resources']),
      includedNamespaceScopedResources: csv(values['include-namespace-scoped-resources']),
      excludedNamespaceScopedResources: csv(values['exclude-namespace-scoped-resources']),
      labelSelector: selectors.labelSelector,
      orLabelSelectors: selectors.orLabelSelectors,
      orderedResources: orderedResources(values['ordered-resources']),
      ttl: values.ttl,
      snapshotVolumes: bool('snapshot-volumes', values['snapshot-volumes']),
      snapshotMoveData: bool('snapshot-move-data', values['snapshot-move-data']),
      defaultVolumesToFsBackup: bool('default-volumes-to-fs-backup', values['default-volumes-to-fs-backup']),
      csiSnapshotTimeout: values['csi-snapshot-timeout'],
      itemOperationTimeout: values['item-operation-timeout'],
      resourcePolicy: resourcePolicyFlag(values['resource-policies-configmap']),
    }).filter(([, v]) => v !== undefined),
  );
}

function progressPrinter(out: NodeJS.WriteStream): (event: ProgressEvent) => void {
  let total = 0;
  let done = 0;
  const labels: Record<string, string> = {
    ValidateBackup: 'Validating the request',
    CollectItems: 'Collecting items into ItemBlocks',
    VolumeOperations: 'Waiting for volume snapshots',
    FinalizeBackup: 'Writing the backup',
    RecordBackupFailure: 'Recording the failure',
  };
  return (event) => {
    if (event.type === 'state') out.write(`${labels[event.state] ?? event.state}…\n`);
    if (event.type === 'collected') {
      total = event.items;
      out.write(`  ${event.items} items in ${event.blocks} ItemBlocks\n`);
    }
    if (event.type === 'workers-in-process')
      out.write(`  (ItemBlock workers in this process, not in worker threads: ${event.reason})\n`);
    if (event.type === 'message-done') {
      done += event.items;
      if (out.isTTY) out.write(`\r  backed up ${done}${total ? `/${total}` : ''} items`);
      if (out.isTTY && total && done >= total) out.write('\n');
    }
  };
}

const stringFlag = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function snapshotRegionOf(values: Record<string, unknown>): string | undefined {
  return stringFlag(values['snapshot-region']) ?? process.env.AWS_REGION;
}

/** EC2 for native snapshots when a region is known (flag, else $AWS_REGION); otherwise none. */
function snapshotterOf(values: Record<string, unknown>): { snapshotter?: Snapshotter } {
  const region = snapshotRegionOf(values);
  return region ? { snapshotter: ebsSnapshotterFor({ region }) } : {};
}

/** Where a command prints: results to `out`, progress and problems to `err`. */
interface Io {
  readonly out: NodeJS.WriteStream;
  readonly err: NodeJS.WriteStream;
}

/** One verb's call: the NAME given (undefined: none), the flags after it, and where to print. */
interface VerbCall {
  readonly name: string | undefined;
  readonly flags: string[];
  readonly io: Io;
}

/**
 * `lifeboat backup delete NAME --confirm`: the backup's snapshots, its data-mover manifests and
 * its objects, then the repository's garbage collection, reporting the bytes it freed.
 */
async function deleteCommand({ name, flags, io }: VerbCall): Promise<number> {
  const { values } = parseArgs({
    args: flags,
    options: {
      ...common,
      confirm: { type: 'boolean' },
      'snapshot-region': { type: 'string' },
      'repository-key-file': { type: 'string' },
      'repack-dead-fraction': { type: 'string' },
    },
    allowPositionals: false,
  });
  if (!name) throw new UsageError('backup delete needs a NAME');
  const fraction = repackDeadFractionFlag(values['repack-dead-fraction']);
  // Velero asks before deleting; a script says --confirm.
  if (!values.confirm)
    throw new UsageError(
      `deleting backup "${name}" removes its snapshots and its data in the repository: add --confirm`,
    );
  const store = localStore(values);
  const repository = localRepository(store, repositoryKeyFile(values['repository-key-file']));
  const result = await deleteBackup(
    { name },
    {
      store,
      ...snapshotterOf(values),
      collectGarbage: () =>
        collectGarbage({ repository, ...(fraction !== undefined ? { repackDeadFraction: fraction } : {}) }),
    },
  );
  if (!result.found) {
    io.err.write(`backup "${name}" not found\n`);
    return 1;
  }
  if (values.output === 'json') io.out.write(`${JSON.stringify(result, null, 2)}\n`);
  else printDeletion({ name, result, io });
  return result.deleted ? 0 : 1;
}

/** Checked before anything is deleted, by the rule the data mover's gc job applies. */
function repackDeadFractionFlag(repack: string | undefined): number | undefined {
  const fraction = repack === undefined ? undefined : repackDeadFraction.safeParse(Number(repack));
  if (fraction && !fraction.success)
    throw new UsageError(
      `--repack-dead-fraction ${fraction.error.issues[0]?.message ?? 'is not valid'}, not ${JSON.stringify(repack)}`,
    );
  return fraction?.data;
}

function printDeletion(deletion: {
  readonly name: string;
  readonly result: Awaited<ReturnType<typeof deleteBackup>>;
  readonly io: Io;
}): void {
  const { name, result, io } = deletion;
  for (const error of result.errors) io.err.write(`${error}\n`);
  io.out.write(
    `Backup "${name}": ${result.deleted ? 'deleted' : 'kept (see the errors above; run the command again)'}: ${result.snapshotsDeleted.length} snapshots, ${result.manifestsDeleted.length} repository manifests, ${result.objectsDeleted} objects.\n`,
  );
  if (result.gc) {
    const gc = result.gc;
    const repacked =
      gc.packsRepacked > 0
        ? ` (${gc.packsRepacked} partly dead packs repacked: ${gc.blobsCopied} live blobs, ${gc.bytesCopied} bytes copied)`
        : '';
    io.out.write(
      `Repository garbage collection: ${gc.packsDeleted} packs deleted, ${gc.bytesFreed} bytes freed${repacked}; ${gc.liveManifests} manifests of other backups kept.\n`,
    );
    for (const problem of gc.problems) io.err.write(`repository garbage collection: ${problem}\n`);
  }
}

export { UsageError };

export async function backupCommand(
  args: string[],
  io: { out: NodeJS.WriteStream; err: NodeJS.WriteStream },
): Promise<number> {
  const [verb, name, ...rest] = args;
  const positionalName = name?.startsWith('-') ? undefined : name;
  const flags = positionalName === undefined && name !== undefined ? [name, ...rest] : rest;
  const call: VerbCall = { name: positionalName, flags, io };
  switch (verb) {
    case 'create':
      return createBackup(call);
    case 'get':
      return getBackups(call);
    case 'describe':
      return describeBackup(call);
    case 'delete':
      return deleteCommand(call);
    default:
      throw new UsageError(
        'usage: lifeboat backup create|get|describe|delete NAME [flags] --local [--dir DIR]',
      );
  }
}

/** `lifeboat backup create NAME --local`: the backup run in this process, its outcome printed. */
async function createBackup({ name, flags, io }: VerbCall): Promise<number> {
  const { request, values } = backupRequestFromFlags(name, flags);
  const store = localStore(values as { local?: boolean; dir?: string });
  const cluster = await clusterFromKubeconfig({
    ...(typeof values.kubeconfig === 'string' ? { path: values.kubeconfig } : {}),
    ...(typeof values.context === 'string' ? { context: values.context } : {}),
  });
  io.err.write(`Backup request "${name}" submitted (local, writing to ${store.location}).\n`);
  try {
    const region = snapshotRegionOf(values);
    const result = (await runLocalBackup(request, {
      cluster,
      store,
      onProgress: progressPrinter(io.err),
      ...snapshotterOf(values),
      dataMover: {
        repository: localRepository(store, repositoryKeyFile(stringFlag(values['repository-key-file']))),
        ...(region ? { region } : {}),
      },
    })) as {
      phase: string;
      items: number;
      errors: number;
      warnings: number;
    };
    io.out.write(
      `Backup "${name}": ${result.phase} (${result.items} items, ${result.errors} errors, ${result.warnings} warnings).\n` +
        `Run \`lifeboat backup describe ${name} --local --dir ${values.dir ?? './lifeboat-backups'}\` for details.\n`,
    );
    return result.phase === 'Completed' ? 0 : 1;
  } catch (error) {
    if (error instanceof ExecutionFailed) {
      io.err.write(`Backup "${name}": ${error.failure.error}\n${error.failure.cause}\n`);
      return 1;
    }
    throw error;
  }
}

/** `lifeboat backup get [NAME]`: every backup (or the one named) as a table, JSON or YAML. */
async function getBackups({ name, flags, io }: VerbCall): Promise<number> {
  const { values } = parseArgs({ args: flags, options: common, allowPositionals: false });
  const store = localStore(values);
  const documents = (await listBackups(store)).filter((d) => !name || d.metadata.name === name);
  if (name && documents.length === 0) {
    io.err.write(`backup "${name}" not found\n`);
    return 1;
  }
  if (values.output === 'json')
    io.out.write(`${JSON.stringify(documents.length === 1 && name ? documents[0] : documents, null, 2)}\n`);
  else if (values.output === 'yaml')
    io.out.write(toYaml(documents.length === 1 && name ? documents[0] : documents));
  else io.out.write(`${renderBackupTable(documents)}\n`);
  return 0;
}

/** `lifeboat backup describe NAME [--details]`: as `velero backup describe` prints it. */
async function describeBackup({ name, flags, io }: VerbCall): Promise<number> {
  const { values } = parseArgs({
    args: flags,
    options: { ...common, details: { type: 'boolean' } },
    allowPositionals: false,
  });
  if (!name) throw new UsageError('backup describe needs a NAME');
  const stored = await readBackup(localStore(values), name);
  if (!stored) {
    io.err.write(`backup "${name}" not found\n`);
    return 1;
  }
  if (values.output === 'json') io.out.write(`${JSON.stringify(stored, null, 2)}\n`);
  else if (values.output === 'yaml') io.out.write(toYaml(stored));
  else io.out.write(renderBackupDescribe({ ...stored, details: values.details ?? false }));
  return 0;
}
