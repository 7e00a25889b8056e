/**
 * The `lifeboat` command line: thin. It parses, calls the local runtime (or, later, the API),
 * and renders. Problems are printed as messages, never stack traces.
 */
import { backupCommand, UsageError } from './backup-commands.js';
import { restoreCommand } from './restore-commands.js';

const USAGE = `usage: lifeboat <command>

  backup create NAME [--include-namespaces a,b] [--exclude-namespaces …] [--include-resources …]
                     [--exclude-resources …] [--include-cluster-resources true|false]
                     [--selector k=v] [--or-selector "a=b or c=d"] [--ordered-resources 'pods=ns/a,ns/b']
                     [--ttl 720h] --local [--dir DIR] [--kubeconfig FILE] [--context NAME]
  backup get [NAME] --local [--dir DIR] [-o json|yaml]
  backup describe NAME --local [--dir DIR] [--details] [-o json|yaml]
  backup delete NAME --confirm --local [--dir DIR] [--snapshot-region R] [--repository-key-file F]
                     [--repack-dead-fraction F]
  restore create NAME --from-backup B [--namespace-mappings a:b,…] [--include-namespaces …]
                      [--include-items kind/ns/name,…] [--existing-resource-policy none|update]
                      [--volume-availability-zone Z] [--volume-kms-key-id K] [--volume-region R]
                      [--volume-account-role-arn ARN [--volume-account-external-id ID]]
                      [--dry-run] --local [--dir DIR] [--kubeconfig FILE] [--context NAME]
                      [--repository-key-file F]
  restore describe NAME --local [--dir DIR] [-o json|yaml]
`;

export async function main(argv: string[]): Promise<number> {
  const io = { out: process.stdout, err: process.stderr };
  const [command, ...rest] = argv;
  try {
    if (command === 'backup') return await backupCommand(rest, io);
    if (command === 'restore') return await restoreCommand(rest, io);
    io.err.write(USAGE);
    return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
    ) {
      io.err.write(`lifeboat: ${error.message}\n`);
      return 2;
    }
    io.err.write(`lifeboat: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
