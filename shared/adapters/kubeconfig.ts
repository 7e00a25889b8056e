/**
 * Finds and reads a kubeconfig as kubectl looks for one: the file named (a command's
 * `--kubeconfig`), else the files of $KUBECONFIG (those that exist), else ~/.kube/config, else the
 * pod's service account; then the context asked for (or the current one) and its cluster. Every
 * problem is a KubeconfigProblem naming the file, variable or context, never a raw ENOENT, and
 * never quoting the file's content: it holds credentials. Reads files; never contacts a server.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeconfigProblem } from './errors.js';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The files to read (none: in a pod, its service account), and how to name them in a message. */
interface KubeconfigSource {
  readonly files: readonly string[];
  readonly named: string;
}

function sourceOf(path: string | undefined): KubeconfigSource {
  if (path !== undefined) {
    if (!existsSync(path)) throw new KubeconfigProblem(`the kubeconfig ${path} does not exist`);
    return { files: [path], named: `the kubeconfig ${path}` };
  }
  const variable = process.env.KUBECONFIG;
  if (variable) {
    const listed = variable.split(delimiter).filter(Boolean);
    // kubectl skips the files of $KUBECONFIG that do not exist; with none left there is nothing.
    const files = listed.filter((f) => existsSync(f));
    if (files.length === 0)
      throw new KubeconfigProblem(`$KUBECONFIG names ${listed.join(delimiter)}, and no such file exists`);
    return { files, named: `the kubeconfig ${files.join(delimiter)} ($KUBECONFIG)` };
  }
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return { files: [home], named: `the kubeconfig ${home}` };
  if (process.env.KUBERNETES_SERVICE_HOST && existsSync(SERVICE_ACCOUNT_TOKEN))
    return { files: [], named: "the pod's service account" };
  throw new KubeconfigProblem(
    `no kubeconfig: $KUBECONFIG is not set and ${home} does not exist (name one with --kubeconfig FILE)`,
  );
}

/** A file's problem in one line: the parser's first line (its next lines quote the file). */
function readProblem(file: string, error: unknown): KubeconfigProblem {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code ?? (error instanceof Error ? error.message : String(error)).split('\n')[0];
  return new KubeconfigProblem(`the kubeconfig ${file} cannot be read: ${reason}`, { cause: error });
}

async function read(source: KubeconfigSource): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (source.files.length === 0) {
    kc.loadFromCluster();
    return kc;
  }
  source.files.forEach((file, i) => {
    try {
      if (i === 0) kc.loadFromFile(file);
      else {
        const more = new KubeConfig();
        more.loadFromFile(file);
        kc.mergeConfig(more);
      }
    } catch (error) {
      throw readProblem(file, error);
    }
  });
  return kc;
}

/** The context asked for (or the current one) made current, with a cluster reached over TLS. */
function chooseContext(kc: KubeConfig, options: { context?: string; named: string }): void {
  const names = kc.getContexts().map((c) => c.name);
  const known = names.length > 0 ? ` (its contexts: ${names.join(', ')})` : ' (it has no contexts)';
  if (options.context !== undefined) {
    if (!kc.getContextObject(options.context))
      throw new KubeconfigProblem(`context "${options.context}" is not in ${options.named}${known}`);
    kc.setCurrentContext(options.context);
  }
  const current = kc.getCurrentContext();
  const context = current ? kc.getContextObject(current) : null;
  if (!context)
    throw new KubeconfigProblem(`${options.named} has no current context: name one with --context${known}`);
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new KubeconfigProblem(
      `context "${current}" of ${options.named} names cluster "${context.cluster}", which it does not define`,
    );
  // The Kubernetes client refuses plain HTTP unless told to skip TLS verification.
  if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify)
    throw new KubeconfigProblem(
      `context "${current}" of ${options.named} reaches ${cluster.server} over plain HTTP, which the Kubernetes client refuses: use its https address`,
    );
}

/**
 * The current cluster's certificate authority read once, here, into the kubeconfig: the
 * Kubernetes client reads a `certificate-authority` file again for every request otherwise (a
 * restore makes one per item). kubectl too reads it once per run. A file that cannot be read is
 * named, never quoted.
 */
function readCertificateAuthority(kc: KubeConfig, named: string): void {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.caFile) return;
  let pem: Buffer;
  try {
    pem = readFileSync(cluster.caFile);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new KubeconfigProblem(
      `cluster "${cluster.name}" of ${named} names the certificate authority ${cluster.caFile}, which cannot be read: ${code}`,
      { cause: error },
    );
  }
  const { caFile: _read, ...rest } = cluster;
  const inline = { ...rest, caData: pem.toString('base64') };
  kc.clusters = kc.clusters.map((c) => (c === cluster ? inline : c));
}

/**
 * A kubeconfig from its text (as `kubeConfig.exportConfig()` gives it), a file, or where kubectl
 * would look, with the context asked for made current.
 */
export async function loadKubeConfig(options: {
  readonly path?: string;
  readonly text?: string;
  readonly context?: string;
}): Promise<KubeConfig> {
  if (options.text !== undefined) {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    kc.loadFromString(options.text);
    chooseContext(kc, {
      named: 'the kubeconfig given',
      ...(options.context ? { context: options.context } : {}),
    });
    readCertificateAuthority(kc, 'the kubeconfig given');
    return kc;
  }
  const source = sourceOf(options.path);
  const kc = await read(source);
  chooseContext(kc, {
    named: source.named,
    ...(options.context !== undefined ? { context: options.context } : {}),
  });
  readCertificateAuthority(kc, source.named);
  return kc;
}
