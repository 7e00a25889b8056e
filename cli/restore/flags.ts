/**
 * The flags of `lifeboat restore create|get|describe|logs|delete`: Velero's, and Lifeboat's own where marked.
 * Descriptions only: what a verb does with them is in its own module.
 */
import { CONTEXT, HELP, KUBECONFIG, OUTPUT, REPOSITORY_KEY_FILE, WAIT, WHERE } from '../common-flags.js';
import type { FlagSpec } from '../flags.js';

const list = (help: string) => ({ type: 'string' as const, value: 'a,b', help });
const optionalBoolean = (help: string) => ({ type: 'optional-boolean' as const, help });

export const restoreCreateFlags = {
  'from-backup': { type: 'string', value: 'BACKUP', help: 'the backup to restore', complete: 'backups' },
  'from-schedule': {
    type: 'string',
    value: 'SCHEDULE',
    help: 'the schedule whose latest Completed backup to restore',
  },
  'include-namespaces': list('namespaces to restore, globs allowed (default: all in the backup)'),
  'exclude-namespaces': list('namespaces not to restore, globs allowed'),
  'include-resources': list('resources to restore, as resource[.group] (default: all)'),
  'exclude-resources': list('resources not to restore'),
  'include-cluster-resources': optionalBoolean(
    'restore cluster-scoped resources (default: when every namespace is restored)',
  ),
  selector: { type: 'string', short: 'l', value: 'k=v,…', help: 'restore only items with these labels' },
  'or-selector': {
    type: 'string',
    value: '"a=b or c=d"',
    help: 'restore items matching any of these label selectors',
  },
  'namespace-mappings': {
    type: 'string',
    value: 'a:b,c:d',
    help: 'restore the items of namespace a into namespace b (and c into d)',
  },
  'include-items': {
    type: 'string',
    value: 'resource/ns/name,…',
    help: 'Lifeboat: restore only these items (resource/name for cluster-scoped ones)',
  },
  'existing-resource-policy': {
    type: 'string',
    value: 'none|update',
    help: 'what to do with an item that exists and differs: leave it (none) or update it',
    complete: ['none', 'update'],
  },
  'restore-volumes': optionalBoolean('restore persistent volumes from their snapshots (default true)'),
  'preserve-nodeports': optionalBoolean("keep Services' node ports as backed up"),
  'status-include-resources': list('resources whose backed-up status is restored too'),
  'status-exclude-resources': list('resources whose status is not restored'),
  'item-operation-timeout': {
    type: 'string',
    value: 'DURATION',
    help: 'how long volume operations may take (default 4h)',
  },
  'resource-modifier-configmap': {
    type: 'string',
    value: '[NS/]NAME',
    help: 'the ConfigMap of resource modifier rules (Lifeboat: in any namespace; default velero)',
  },
  'dry-run': {
    type: 'boolean',
    help: 'Lifeboat: print what would be created, updated or skipped; write nothing',
  },
  'volume-availability-zone': {
    type: 'string',
    value: 'ZONE',
    help: 'Lifeboat: re-create snapshot volumes in this zone',
  },
  'volume-kms-key-id': {
    type: 'string',
    value: 'KEY',
    help: 'Lifeboat: encrypt re-created volumes with this KMS key',
  },
  'volume-region': {
    type: 'string',
    value: 'REGION',
    help: "Lifeboat: write volumes from the data mover's repository in this region",
  },
  'volume-account-role-arn': {
    type: 'string',
    value: 'ARN',
    help: 'Lifeboat: write those volumes in another account, through this role',
  },
  'volume-account-external-id': {
    type: 'string',
    value: 'ID',
    help: "Lifeboat: the external id that role's trust policy asks for",
  },
  cluster: {
    type: 'string',
    value: 'NAME',
    help: "Lifeboat: the cluster to restore into, by the name the deployment serves it by (default: its only one; with --local, the kubeconfig's)",
  },
  'repository-key-file': REPOSITORY_KEY_FILE,
  kubeconfig: KUBECONFIG,
  context: CONTEXT,
  wait: WAIT,
  ...WHERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const restoreDescribeFlags = {
  details: { type: 'boolean', help: 'list every restored item with its outcome' },
  ...WHERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const restoreGetFlags = {
  ...WHERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const restoreLogsFlags = {
  ...WHERE,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const restoreDeleteFlags = {
  confirm: { type: 'boolean', help: 'delete without asking (required: nothing asks)' },
  ...WHERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;
