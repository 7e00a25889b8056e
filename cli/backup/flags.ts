/**
 * The flags of `lifeboat backup create|get|describe|delete`: Velero's, and Lifeboat's own where
 * marked. Descriptions only: what a verb does with them is in its own module.
 */
import {
  CONTEXT,
  HELP,
  KUBECONFIG,
  OUTPUT,
  REPOSITORY_KEY_FILE,
  SNAPSHOT_REGION,
  WAIT,
  WHERE,
} from '../common-flags.js';
import type { FlagSpec } from '../flags.js';

const list = (help: string) => ({ type: 'string' as const, value: 'a,b', help });
const optionalBoolean = (help: string) => ({ type: 'optional-boolean' as const, help });

export const backupCreateFlags = {
  'include-namespaces': list('namespaces to back up, globs allowed (default: all)'),
  'exclude-namespaces': list('namespaces not to back up, globs allowed'),
  'include-resources': list('resources to back up, as resource[.group] (default: all)'),
  'exclude-resources': list('resources not to back up'),
  'include-cluster-resources': optionalBoolean(
    'back up cluster-scoped resources (default: those the namespaced items use, or all with every namespace)',
  ),
  'include-cluster-scoped-resources': list('cluster-scoped resources to back up'),
  'exclude-cluster-scoped-resources': list('cluster-scoped resources not to back up'),
  'include-namespace-scoped-resources': list('namespace-scoped resources to back up'),
  'exclude-namespace-scoped-resources': list('namespace-scoped resources not to back up'),
  selector: { type: 'string', short: 'l', value: 'k=v,…', help: 'back up only items with these labels' },
  'or-selector': {
    type: 'string',
    value: '"a=b or c=d"',
    help: 'back up items matching any of these label selectors',
  },
  'ordered-resources': {
    type: 'string',
    value: "'pods=ns/a,ns/b;…'",
    help: 'back up these items first, in this order',
  },
  ttl: { type: 'string', value: 'DURATION', help: 'how long the backup is kept (default 720h)' },
  labels: { type: 'string', value: 'k=v,…', help: 'labels of the Backup object' },
  'snapshot-volumes': optionalBoolean('take snapshots of the persistent volumes'),
  'snapshot-move-data': optionalBoolean("move the snapshots' data into the data mover's repository"),
  'default-volumes-to-fs-backup': optionalBoolean('back up every pod volume by file system backup'),
  'csi-snapshot-timeout': {
    type: 'string',
    value: 'DURATION',
    help: 'how long a CSI snapshot may take to become ready (default 10m)',
  },
  'item-operation-timeout': {
    type: 'string',
    value: 'DURATION',
    help: 'how long asynchronous volume operations may take (default 4h)',
  },
  'resource-policies-configmap': {
    type: 'string',
    value: '[NS/]NAME',
    help: 'the ConfigMap holding the volume policies (Lifeboat: in any namespace)',
  },
  cluster: {
    type: 'string',
    value: 'NAME',
    help: "Lifeboat: the cluster's name in the request (default local)",
  },
  'from-schedule': {
    type: 'string',
    value: 'SCHEDULE',
    help: "back up now from this schedule's template, named as its firing now would be (no NAME then)",
  },
  'snapshot-region': SNAPSHOT_REGION,
  'repository-key-file': REPOSITORY_KEY_FILE,
  kubeconfig: KUBECONFIG,
  context: CONTEXT,
  wait: WAIT,
  ...WHERE,
  output: OUTPUT,
  help: HELP,
  'copy-snapshots': {
    type: 'string',
    value: '[ACCOUNT]:REGION[:KMS_KEY][:ROLE_ARN[#EXTERNAL_ID]],…',
    help: "Lifeboat: copy each EBS snapshot into these accounts and regions for DR (copySnapshots; no ACCOUNT: the backup's own)",
  },
} as const satisfies Record<string, FlagSpec>;

export const backupGetFlags = {
  ...WHERE,
  output: OUTPUT,
  location: {
    type: 'string',
    value: 'NAME',
    help: "Lifeboat's: list a backup location besides the deployment's own, read only (dr: a DR deployment's source)",
  },
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const backupLogsFlags = {
  ...WHERE,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const backupDownloadFlags = {
  file: {
    type: 'string',
    value: 'FILE',
    help: 'where to write the archive (default: NAME-data.tar.gz here)',
    complete: 'files',
  },
  force: { type: 'boolean', help: 'overwrite the file if it exists' },
  ...WHERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const backupDescribeFlags = {
  details: { type: 'boolean', help: 'list every item, volume, operation, error and warning' },
  ...WHERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const backupDeleteFlags = {
  confirm: { type: 'boolean', help: 'delete without asking (required: nothing asks)' },
  'snapshot-region': SNAPSHOT_REGION,
  'repository-key-file': REPOSITORY_KEY_FILE,
  'repack-dead-fraction': {
    type: 'string',
    value: 'F',
    help: 'Lifeboat: repack repository packs at least this fraction dead, in (0, 1] (default 0.5)',
  },
  ...WHERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;
