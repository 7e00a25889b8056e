/**
 * `lifeboat restore create|describe`: a `velero.io/v1` Restore from flags, run with --local in this
 * process against the kubeconfig's cluster, reading the backup from --dir (and volume data from
 * the data mover's repository there).
 */
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { stringify as toYaml } from 'yaml';
import { settleAbandonedRestore } from '../functions/record-restore-failure/abandoned-restore.js';
import { clusterFromKubeconfig } from '../shared/adapters/kubernetes-cluster.js';
import { ExecutionFailed } from '../shared/adapters/local-state-machine.js';
import { systemClock } from '../shared/adapters/system-clock.js';
import { restoreKeys } from '../shared/domain/storage/keys.js';
import { csv, localStore, UsageError } from './flags.js';
import { localRepository, repositoryKeyFile } from './local/local-data-mover.js';
import { runLocalRestore } from './local/restore-runtime.js';

/** Where a command prints: results to `out`, progress and problems to `err`. */
interface Io {
  readonly out: NodeJS.WriteStream;
  readonly err: NodeJS.WriteStream;
}

/** One verb's call: the restore's NAME, the flags after it, and where to print. */
interface VerbCall {
  readonly name: string;
  readonly flags: string[];
  readonly io: Io;
}

export async function restoreCommand(
  args: string[],
  io: { out: NodeJS.WriteStream; err: NodeJS.WriteStream },
): Promise<number> {
  const [verb, name, ...flags] = args;
  if (!name || name.startsWith('-')) throw new UsageError(`restore ${verb ?? ''} needs a NAME`);
  if (verb === 'create') return createRestore({ name, flags, io });
  if (verb === 'describe') return describeRestore({ name, flags, io });
  throw new UsageError(
    'usage: lifeboat restore create|describe NAME --from-backup B [flags] --local [--dir DIR]',
  );
}

function parseCreateFlags(flags: string[]) {
  return parseArgs({
    args: flags,
    options: {
      local: { type: 'boolean' },
      dir: { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'from-backup': { type: 'string' },
      'from-schedule': { type: 'string' },
      'include-namespaces': { type: 'string' },
      'exclude-namespaces': { type: 'string' },
      'include-resources': { type: 'string' },
      'exclude-resources': { type: 'string' },
      'namespace-mappings': { type: 'string' },
      'include-items': { type: 'string' },
      'existing-resource-policy': { type: 'string' },
      'preserve-nodeports': { type: 'boolean' },
      'resource-modifier-configmap': { type: 'string' },
      'dry-run': { type: 'boolean' },
      output: { type: 'string', short: 'o' },
      // Lifeboat: where restored volumes go (docs/restore-volumes.md).
      'volume-availability-zone': { type: 'string' },
      'volume-kms-key-id': { type: 'string' },
      'volume-region': { type: 'string' },
      'volume-account-role-arn': { type: 'string' },
      'volume-account-external-id': { type: 'string' },
      'repository-key-file': { type: 'string' },
    },
  }).values;
}

type CreateFlags = ReturnType<typeof parseCreateFlags>;

/** `lifeboat restore create NAME --local`: the restore run in this process, its outcome printed. */
async function createRestore({ name, flags, io }: VerbCall): Promise<number> {
  const values = parseCreateFlags(flags);
  const spec = restoreSpec(values);
  const store = localStore(values);
  const cluster = await clusterFromKubeconfig({
    ...(values.kubeconfig ? { path: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
  });
  io.err.write(`Restore request "${name}" submitted (local, reading ${store.location}).\n`);
  try {
    const result = await runLocalRestore(
      {
        cluster: 'local',
        restore: { apiVersion: 'velero.io/v1', kind: 'Restore', metadata: { name }, spec },
      },
      {
        cluster,
        store,
        // Volumes in the data mover's repository: the one in --dir, its key file outside it.
        dataMover: {
          repository: localRepository(store, repositoryKeyFile(values['repository-key-file'])),
          ...(process.env.AWS_REGION ? { region: process.env.AWS_REGION } : {}),
        },
        onPhase: (phase, t) =>
          io.err.write(
            `  ${phase}: ${t.created} created, ${t.updated} updated, ${t.skipped} skipped, ${t.failed} failed\n`,
          ),
      },
    );
    return values['dry-run']
      ? printDryRun({ result, json: values.output === 'json', io })
      : printRestored({ name, result, io });
  } catch (error) {
    if (error instanceof ExecutionFailed) {
      io.err.write(`Restore "${name}": ${error.failure.error}\n${error.failure.cause}\n`);
      return 1;
    }
    throw error;
  }
}

/** The Restore's spec: only the fields a flag set, in Velero's names. */
function restoreSpec(values: CreateFlags): Record<string, unknown> {
  const mappings = csv(values['namespace-mappings'])?.map((m) => {
    const [from, to] = m.split(':');
    if (!from || !to) throw new UsageError(`--namespace-mappings: "${m}" is not source:target`);
    return [from, to] as const;
  });
  const resourceModifier = resourceModifierFlag(values['resource-modifier-configmap']);
  return Object.fromEntries(
    Object.entries({
      backupName: values['from-backup'],
      scheduleName: values['from-schedule'],
      includedNamespaces: csv(values['include-namespaces']),
      excludedNamespaces: csv(values['exclude-namespaces']),
      includedResources: csv(values['include-resources']),
      excludedResources: csv(values['exclude-resources']),
      namespaceMapping: mappings ? Object.fromEntries(mappings) : undefined,
      includeItems: csv(values['include-items']),
      existingResourcePolicy: values['existing-resource-policy'],
      preserveNodePorts: values['preserve-nodeports'],
      resourceModifier,
      dryRun: values['dry-run'],
      volumeAvailabilityZone: values['volume-availability-zone'],
      volumeKmsKeyId: values['volume-kms-key-id'],
      volumeRegion: values['volume-region'],
      volumeAccountRoleArn: values['volume-account-role-arn'],
      volumeAccountExternalId: values['volume-account-external-id'],
    }).filter(([, v]) => v !== undefined),
  );
}

/** Velero's flag names the ConfigMap; Lifeboat also takes NAMESPACE/NAME (default namespace: velero). */
function resourceModifierFlag(text: string | undefined): Record<string, string | undefined> | undefined {
  const modifierRef = text?.split('/');
  if (modifierRef && (modifierRef.length > 2 || modifierRef.some((part) => !part)))
    throw new UsageError('--resource-modifier-configmap: expected NAME or NAMESPACE/NAME');
  return modifierRef
    ? {
        kind: 'ConfigMap',
        name: modifierRef.at(-1),
        ...(modifierRef.length === 2 ? { namespace: modifierRef[0] } : {}),
      }
    : undefined;
}

/** `--dry-run`: what the restore would do to each item, as JSON or one line each. */
function printDryRun(dryRun: { readonly result: unknown; readonly json: boolean; readonly io: Io }): number {
  const { io } = dryRun;
  const plan = dryRun.result as {
    preview?: { phase: string; item: string; action: string; reason?: string }[];
  };
  if (dryRun.json) io.out.write(`${JSON.stringify(plan, null, 2)}\n`);
  else
    for (const p of plan.preview ?? [])
      io.out.write(`${p.action.padEnd(7)} ${p.phase} ${p.item}${p.reason ? `  (${p.reason})` : ''}\n`);
  return 0;
}

/** The restore's outcome in one line; exit status 1 unless it completed. */
function printRestored(restored: {
  readonly name: string;
  readonly result: unknown;
  readonly io: Io;
}): number {
  const r = restored.result as {
    phase: string;
    items: number;
    created: number;
    updated: number;
    skipped: number;
    failed: number;
  };
  restored.io.out.write(
    `Restore "${restored.name}": ${r.phase} (${r.created} created, ${r.updated} updated, ${r.skipped} skipped, ${r.failed} failed).\n`,
  );
  return r.phase === 'Completed' ? 0 : 1;
}

/** What `restore describe` reads: the restore's status document. */
interface RestoreDocument {
  spec: { backupName: string };
  status: Record<string, unknown> & { progress?: { totalItems: number; itemsRestored: number } };
}

/** `lifeboat restore describe NAME`: the restore's status and what it restored. */
async function describeRestore({ name, flags, io }: VerbCall): Promise<number> {
  const { values } = parseArgs({
    args: flags,
    options: {
      local: { type: 'boolean' },
      dir: { type: 'string' },
      output: { type: 'string', short: 'o' },
    },
  });
  const store = localStore(values);
  const keys = restoreKeys(name);
  // A restore whose run died is recorded Failed first; one still running says so.
  const found = await settleAbandonedRestore({ name }, { store, clock: systemClock });
  if (found.state === 'running') {
    io.out.write(`Name:   ${name}\nPhase:  InProgress (run ${found.claim.runId})\n`);
    return 0;
  }
  const status = await store.get(keys.status);
  if (!status) {
    io.err.write(`restore "${name}" not found\n`);
    return 1;
  }
  const document = JSON.parse(Buffer.from(status).toString('utf8')) as RestoreDocument;
  const listRaw = await store.get(keys.resourceList);
  const list = listRaw ? (JSON.parse(gunzipSync(listRaw).toString('utf8')) as Record<string, string[]>) : {};
  if (values.output === 'json')
    io.out.write(`${JSON.stringify({ ...document, resourceList: list }, null, 2)}\n`);
  else if (values.output === 'yaml') io.out.write(toYaml({ ...document, resourceList: list }));
  else io.out.write(renderRestoreDescribe({ name, document, list }));
  return 0;
}

function renderRestoreDescribe(described: {
  readonly name: string;
  readonly document: RestoreDocument;
  readonly list: Record<string, string[]>;
}): string {
  const { name, document, list } = described;
  const s = document.status;
  return [
    `Name:         ${name}`,
    `Backup:       ${document.spec.backupName}`,
    '',
    `Phase:                       ${String(s.phase)}`,
    ...(s.failureReason ? [`Failure reason:              ${String(s.failureReason)}`] : []),
    `Total items to be restored:  ${s.progress?.totalItems ?? 0}`,
    `Items restored:              ${s.progress?.itemsRestored ?? 0}`,
    '',
    `Started:    ${String(s.startTimestamp)}`,
    `Completed:  ${String(s.completionTimestamp ?? '<none>')}`,
    '',
    `Warnings:  ${String(s.warnings ?? 0)}`,
    `Errors:    ${String(s.errors ?? 0)}`,
    '',
    'Resource List:',
    ...Object.entries(list).flatMap(([kind, items]) => [`  ${kind}:`, ...items.map((i) => `    - ${i}`)]),
    '',
  ].join('\n');
}
