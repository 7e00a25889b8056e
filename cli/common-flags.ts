/** The flags several `lifeboat` verbs share: where the backups are, the cluster, the output form. */
import type { FlagSpec } from './flags.js';

export const LOCAL = {
  type: 'boolean',
  help: "run here, against a kubeconfig and a backup directory, instead of a deployment's API",
} as const satisfies FlagSpec;

export const ENDPOINT = {
  type: 'string',
  value: 'URL',
  help: "the Lifeboat API (default: $LIFEBOAT_ENDPOINT, else the config file's, see lifeboat config set endpoint)",
} as const satisfies FlagSpec;

export const WAIT = {
  type: 'boolean',
  help: 'wait until it ends, showing its progress (with --local it always does)',
} as const satisfies FlagSpec;

export const DEFAULT_DIR = './lifeboat-backups';

export const DIR = {
  type: 'string',
  value: 'DIR',
  help: `the backup directory (default ${DEFAULT_DIR})`,
  complete: 'dirs',
} as const satisfies FlagSpec;

export const OUTPUT = {
  type: 'string',
  short: 'o',
  value: 'json|yaml',
  help: 'print the result as JSON or YAML instead of text',
  complete: ['json', 'yaml'],
} as const satisfies FlagSpec;

/** Where a verb finds the backups: a local directory (--local, --dir) or a deployment's API. */
export const WHERE = { local: LOCAL, dir: DIR, endpoint: ENDPOINT } as const;

export const KUBECONFIG = {
  type: 'string',
  value: 'FILE',
  help: 'the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)',
  complete: 'files',
} as const satisfies FlagSpec;

export const CONTEXT = {
  type: 'string',
  value: 'NAME',
  help: "the kubeconfig's context to use (default: its current context)",
  complete: 'contexts',
} as const satisfies FlagSpec;

export const REPOSITORY_KEY_FILE = {
  type: 'string',
  value: 'FILE',
  help: "the data mover repository's key file, kept outside --dir (default: $LIFEBOAT_REPOSITORY_KEY_FILE, else ~/.config/lifeboat/repository.key)",
  complete: 'files',
} as const satisfies FlagSpec;

export const SNAPSHOT_REGION = {
  type: 'string',
  value: 'REGION',
  help: 'the region of the EBS volumes and snapshots (default: $AWS_REGION)',
} as const satisfies FlagSpec;

export const HELP = { type: 'boolean', short: 'h', help: 'print this help' } as const satisfies FlagSpec;
