/**
 * `backup create`'s flags as a `velero.io/v1` Backup request: only the fields a flag set, in
 * Velero's names. A value a flag cannot mean is a usage error naming the flag.
 */
import { csv, type FlagValues, UsageError } from '../flags.js';
import { labelSelectors } from '../selectors.js';
import type { backupCreateFlags } from './flags.js';

type CreateFlags = FlagValues<typeof backupCreateFlags>;

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

/** `--labels a=b,c=d`. */
function labelsFlag(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  return Object.fromEntries(
    (csv(text) ?? []).map((pair) => {
      const [key, value, ...rest] = pair.split('=');
      if (!key || value === undefined || rest.length > 0)
        throw new UsageError(`--labels: "${pair}" is not key=value`);
      return [key, value];
    }),
  );
}

/**
 * Lifeboat's `--copy-snapshots '[ACCOUNT]:REGION[:KMS_KEY][:ROLE_ARN[#EXTERNAL_ID]],…'`: the role
 * ARN, when given, ends an entry; the fields are checked by the request's validation.
 */
export function copySnapshotsFlag(text: string | undefined): Record<string, string>[] | undefined {
  if (text === undefined) return undefined;
  return (csv(text) ?? []).map((entry) => {
    const role = /:(arn:aws[\w-]*:iam::[^#]*)(?:#(.*))?$/.exec(entry);
    const [account = '', region = '', ...key] = (role ? entry.slice(0, role.index) : entry).split(':');
    if (!region)
      throw new UsageError(`--copy-snapshots: "${entry}" is not [ACCOUNT]:REGION[:KMS_KEY][:ROLE_ARN]`);
    const kmsKeyId = key.join(':');
    return {
      ...(account ? { account } : {}),
      region,
      ...(kmsKeyId ? { kmsKeyId } : {}),
      ...(role?.[1] ? { roleArn: role[1] } : {}),
      ...(role?.[2] ? { externalId: role[2] } : {}),
    };
  });
}

/** The Backup's spec: only the fields a flag set, in Velero's names. */
function backupSpec(values: CreateFlags): Record<string, unknown> {
  const selectors = labelSelectors(values);
  return Object.fromEntries(
    Object.entries({
      includedNamespaces: csv(values['include-namespaces']),
      excludedNamespaces: csv(values['exclude-namespaces']),
      includedResources: csv(values['include-resources']),
      excludedResources: csv(values['exclude-resources']),
      includeClusterResources: values['include-cluster-resources'],
      includedClusterScopedResources: csv(values['include-cluster-scoped-resources']),
      excludedClusterScopedResources: csv(values['exclude-cluster-scoped-resources']),
      includedNamespaceScopedResources: csv(values['include-namespace-scoped-resources']),
      excludedNamespaceScopedResources: csv(values['exclude-namespace-scoped-resources']),
      labelSelector: selectors.labelSelector,
      orLabelSelectors: selectors.orLabelSelectors,
      orderedResources: orderedResources(values['ordered-resources']),
      ttl: values.ttl,
      snapshotVolumes: values['snapshot-volumes'],
      snapshotMoveData: values['snapshot-move-data'],
      defaultVolumesToFsBackup: values['default-volumes-to-fs-backup'],
      csiSnapshotTimeout: values['csi-snapshot-timeout'],
      itemOperationTimeout: values['item-operation-timeout'],
      resourcePolicy: resourcePolicyFlag(values['resource-policies-configmap']),
      copySnapshots: copySnapshotsFlag(values['copy-snapshots']),
    }).filter(([, v]) => v !== undefined),
  );
}

export function backupRequest(options: { readonly name: string; readonly values: CreateFlags }): unknown {
  const labels = labelsFlag(options.values.labels);
  return {
    cluster: options.values.cluster ?? 'local',
    backup: {
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { name: options.name, ...(labels ? { labels } : {}) },
      spec: backupSpec(options.values),
    },
  };
}
