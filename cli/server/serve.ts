/**
 * `lifeboat server --local --dir DIR`: the API of a deployment served on loopback by the same
 * handler code API Gateway invokes (functions/api), its workflows run in this process as
 * `lifeboat --local` runs them, against the clusters it serves and the directory. Requests carry
 * the token it writes, readable by its owner alone, to its token file. Prints its address on
 * stdout; stops on SIGINT or SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { handleApiRequest } from '../../functions/api/api.js';
import { tokenFile } from '../config.js';
import { UsageError } from '../flags.js';
import { publishLocalOutcome } from '../local/events.js';
import { localStore } from '../store.js';
import type { VerbCall } from '../verb-call.js';
import { clusterReacher, contextsOf, parseClusters } from './clusters.js';
import type { serverFlags } from './flags.js';
import { httpAdapter } from './http-adapter.js';
import { LocalExecutions } from './local-executions.js';
import { LocalDownloadLinks } from './local-links.js';
import { localRunners } from './runners.js';
import { startScheduleTimers, storeReadTimer } from './schedule-timers.js';

function portOf(text: string | undefined): number {
  if (text === undefined) return 0;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a port number, not ${JSON.stringify(text)}`);
  return port;
}

/** Writes a fresh token where only this user can read it. */
async function writeToken(file: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  // An existing file keeps its mode through writeFile: set it.
  await chmod(file, 0o600);
  return token;
}

export async function serve({ values, io }: VerbCall<typeof serverFlags>): Promise<number> {
  if (!values.local)
    throw new UsageError(
      'lifeboat server serves the API here and needs --local (in AWS, API Gateway serves it)',
    );
  const port = portOf(values.port);
  const store = await localStore(values, { mustExist: false });
  await mkdir(store.location.slice('file://'.length), { recursive: true });
  const served = values.clusters ? parseClusters(values.clusters) : await contextsOf(values.kubeconfig);
  const executions = new LocalExecutions(
    await localRunners({ store, clusterNamed: clusterReacher(served), values }),
    (execution) =>
      publishLocalOutcome({ store, execution, warn: (m) => io.err.write(`lifeboat server: ${m}\n`) }),
  );
  let base = '';
  const links = new LocalDownloadLinks(() => base);
  const file = tokenFile(values['token-file']);
  const token = await writeToken(file);
  const deps = {
    store,
    executions,
    links,
    clusters: [...served.keys()],
    timer: storeReadTimer,
    onError: (error: unknown) =>
      io.err.write(
        `lifeboat server: a request failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}\n`,
      ),
  };
  const server = createServer(
    httpAdapter({
      token,
      links,
      store,
      handle: (event) => handleApiRequest(event, deps),
      onError: deps.onError,
    }),
  );
  await new Promise<void>((listening, failed) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      failed(error.code === 'EADDRINUSE' ? new UsageError(`--port ${port} is in use`) : error),
    );
    server.listen(port, '127.0.0.1', () => listening());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  io.out.write(`${base}\n`);
  io.err.write(
    `Lifeboat API on ${base}, serving ${[...served.keys()].join(', ') || 'no cluster'} from ${store.location}; the token is in ${file}. Ctrl-C stops it.\n`,
  );
  const timers = startScheduleTimers({ store, executions, values, io });
  const signal = await new Promise<string>((stop) => {
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  io.err.write(`Stopping (${signal}).\n`);
  timers.stop();
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
  return 0;
}
