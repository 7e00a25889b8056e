/**
 * The flags of `lifeboat dr drill|get|describe`: Lifeboat's own verbs (Velero has no drills), with
 * the restore's flag names where they mean the same. Descriptions only.
 */
import { CONTEXT, HELP, KUBECONFIG, OUTPUT, REPOSITORY_KEY_FILE, WHERE } from '../common-flags.js';

/** With --local, here; otherwise through a deployment's API (POST /drills, GET /drills[/{name}]). */
const HERE = WHERE;

import type { FlagSpec } from '../flags.js';

export const drDrillFlags = {
  'from-backup': { type: 'string', value: 'BACKUP', help: 'the backup to drill with', complete: 'backups' },
  'from-schedule': {
    type: 'string',
    value: 'SCHEDULE',
    help: 'drill with the latest Completed backup of this schedule',
  },
  cluster: {
    type: 'string',
    value: 'NAME',
    help: "the DR cluster to restore into, by the name the deployment serves it by (with --local, the kubeconfig's)",
  },
  'namespace-mappings': {
    type: 'string',
    value: 'a:b,c:d',
    help: 'restore the items of namespace a into namespace b (and c into d)',
  },
  timeout: {
    type: 'string',
    value: 'DURATION',
    help: 'how long to wait for Deployments, StatefulSets and PVCs to be ready (default 10m)',
  },
  'repository-key-file': REPOSITORY_KEY_FILE,
  kubeconfig: KUBECONFIG,
  context: CONTEXT,
  ...HERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const drGetFlags = {
  ...HERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;

export const drDescribeFlags = {
  ...HERE,
  output: OUTPUT,
  help: HELP,
} as const satisfies Record<string, FlagSpec>;
