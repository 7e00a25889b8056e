/**
 * The restore hook specs checked up front, so that a bad hook fails the request with its field
 * path (FailedValidation) rather than pod by pod during the restore. The request schema already
 * checks shapes, container names and timeouts (Go durations, not negative); this adds what it
 * cannot: Velero's init container rule (name, image and command), and exec hooks that could
 * never run as written. Never reads the cluster.
 */
import type { RestoreSpec } from '../../shared/contracts/restore-request.js';
import type { FieldProblem } from '../../shared/domain/errors.js';
import { restoreInitHookProblems } from '../../shared/domain/hooks/restore.js';

/** A container name as the API accepts it (RFC 1123 label). */
const CONTAINER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function restoreHookProblems(spec: RestoreSpec): FieldProblem[] {
  const specs = spec.hooks?.resources ?? [];
  const problems: FieldProblem[] = restoreInitHookProblems(specs).map((p) => ({
    path: `restore.${p.path}`,
    message: p.message,
  }));
  for (const [i, entry] of specs.entries()) {
    for (const [j, hook] of (entry.postHooks ?? []).entries()) {
      const path = `restore.spec.hooks.resources[${i}].postHooks[${j}]`;
      if (!hook.init && !hook.exec) {
        problems.push({ path, message: 'a post hook needs init or exec' });
        continue;
      }
      const init = hook.init;
      if (init && (init.initContainers ?? []).length === 0)
        problems.push({
          path: `${path}.init.initContainers`,
          message: 'an init hook needs at least one container',
        });
      for (const [k, container] of (init?.initContainers ?? []).entries()) {
        const name = container.name;
        if (typeof name === 'string' && name !== '' && !CONTAINER_NAME.test(name))
          problems.push({
            path: `${path}.init.initContainers[${k}].name`,
            message: 'must be a container name (lowercase letters, digits and "-", at most 63)',
          });
      }
      if (hook.exec?.command[0] === '')
        problems.push({ path: `${path}.exec.command[0]`, message: 'the program to run must not be empty' });
    }
  }
  return problems;
}
