/**
 * `restore create`'s flags as a `velero.io/v1` Restore request: only the fields a flag set, in
 * Velero's names (and Lifeboat's where marked in flags.ts). A value a flag cannot mean is a
 * usage error naming the flag.
 */
import { csv, type FlagValues, UsageError } from '../flags.js';
import { labelSelectors } from '../selectors.js';
import type { restoreCreateFlags } from './flags.js';

type CreateFlags = FlagValues<typeof restoreCreateFlags>;

/** `--namespace-mappings a:b,c:d` (also `dr drill`'s). */
export function namespaceMapping(text: string | undefined): Record<string, string> | undefined {
  const pairs = csv(text)?.map((m) => {
    const [from, to, ...rest] = m.split(':');
    if (!from || !to || rest.length > 0)
      throw new UsageError(`--namespace-mappings: "${m}" is not source:target`);
    return [from, to] as const;
  });
  return pairs ? Object.fromEntries(pairs) : undefined;
}

/** Velero's flag names the ConfigMap; Lifeboat also takes NAMESPACE/NAME (default namespace: velero). */
function resourceModifierFlag(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const parts = text.split('/');
  const [first = '', second] = parts;
  if (parts.length > 2 || parts.some((part) => !part))
    throw new UsageError(`--resource-modifier-configmap: "${text}" is not [NAMESPACE/]NAME`);
  return second === undefined
    ? { kind: 'ConfigMap', name: first }
    : { kind: 'ConfigMap', namespace: first, name: second };
}

/** `--status-include-resources` and `--status-exclude-resources`: Velero's `restoreStatus`. */
function restoreStatus(values: CreateFlags): Record<string, string[]> | undefined {
  const included = csv(values['status-include-resources']);
  const excluded = csv(values['status-exclude-resources']);
  if (!included && !excluded) return undefined;
  return {
    ...(included ? { includedResources: included } : {}),
    ...(excluded ? { excludedResources: excluded } : {}),
  };
}

/** The backup to restore: one of --from-backup and --from-schedule, as Velero requires. */
function source(values: CreateFlags): { backupName?: string; scheduleName?: string } {
  const backup = values['from-backup'];
  const schedule = values['from-schedule'];
  if (backup !== undefined && schedule !== undefined)
    throw new UsageError('--from-backup and --from-schedule exclude each other: give one');
  if (!backup && !schedule)
    throw new UsageError('restore create needs --from-backup BACKUP or --from-schedule SCHEDULE');
  return backup !== undefined ? { backupName: backup } : { scheduleName: schedule as string };
}

/** The Restore's spec: only the fields a flag set. */
export function restoreSpec(values: CreateFlags): Record<string, unknown> {
  const selectors = labelSelectors(values);
  return Object.fromEntries(
    Object.entries({
      ...source(values),
      includedNamespaces: csv(values['include-namespaces']),
      excludedNamespaces: csv(values['exclude-namespaces']),
      includedResources: csv(values['include-resources']),
      excludedResources: csv(values['exclude-resources']),
      includeClusterResources: values['include-cluster-resources'],
      labelSelector: selectors.labelSelector,
      orLabelSelectors: selectors.orLabelSelectors,
      namespaceMapping: namespaceMapping(values['namespace-mappings']),
      includeItems: csv(values['include-items']),
      existingResourcePolicy: values['existing-resource-policy'],
      restorePVs: values['restore-volumes'],
      preserveNodePorts: values['preserve-nodeports'],
      restoreStatus: restoreStatus(values),
      itemOperationTimeout: values['item-operation-timeout'],
      resourceModifier: resourceModifierFlag(values['resource-modifier-configmap']),
      dryRun: values['dry-run'],
      volumeAvailabilityZone: values['volume-availability-zone'],
      volumeKmsKeyId: values['volume-kms-key-id'],
      volumeRegion: values['volume-region'],
      volumeAccountRoleArn: values['volume-account-role-arn'],
      volumeAccountExternalId: values['volume-account-external-id'],
    }).filter(([, v]) => v !== undefined),
  );
}

/** Velero's name for a restore not named: `<backup or schedule>-YYYYMMDDhhmmss`. */
export function defaultRestoreName(values: CreateFlags, now: Date): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${values['from-backup'] ?? values['from-schedule'] ?? 'restore'}-${stamp}`;
}

export function restoreRequest(options: { readonly name: string; readonly values: CreateFlags }): unknown {
  return {
    cluster: options.values.cluster ?? 'local',
    restore: {
      apiVersion: 'velero.io/v1',
      kind: 'Restore',
      metadata: { name: options.name },
      spec: restoreSpec(options.values),
    },
  };
}
