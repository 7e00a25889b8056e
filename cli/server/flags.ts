/** The flags of `lifeboat server` (Lifeboat's own). Descriptions only. */
import { DIR, HELP, KUBECONFIG, LOCAL, REPOSITORY_KEY_FILE, SNAPSHOT_REGION } from '../common-flags.js';
import type { FlagSpec } from '../flags.js';

export const serverFlags = {
  local: LOCAL,
  dir: DIR,
  port: { type: 'string', value: 'PORT', help: 'the loopback port to serve on (default: one that is free)' },
  kubeconfig: KUBECONFIG,
  clusters: {
    type: 'string',
    value: 'NAME=FILE[#CONTEXT],…',
    help: 'the clusters served, each a kubeconfig (and context); default: every context of --kubeconfig, by its name',
  },
  'token-file': {
    type: 'string',
    value: 'FILE',
    help: 'where the server writes the token requests must carry, readable by you alone (default: $LIFEBOAT_TOKEN_FILE, else ~/.config/lifeboat/server-token)',
    complete: 'files',
  },
  'snapshot-region': SNAPSHOT_REGION,
  'repository-key-file': REPOSITORY_KEY_FILE,
  'gc-interval': {
    type: 'string',
    value: 'DURATION',
    help: 'how often garbage collection deletes expired backups and those no retention keeps (default 1h)',
  },
  help: HELP,
} as const satisfies Readonly<Record<string, FlagSpec>>;
