/**
 * How the cluster adapter's requests reach the API server: the kubeconfig's TLS material (the
 * certificate authority, a client certificate and key, the server name, whether to verify)
 * read once into one keep-alive Agent, and its credentials. A bearer token or a user name and
 * password written in the kubeconfig never change, so they are applied once; those of an exec
 * plugin or an auth provider expire and are refreshed, so the Kubernetes client is asked for
 * them before every request, as it would be. The Kubernetes client otherwise decodes the
 * certificates and builds a new Agent for every request (a restore makes one per item). Never
 * logs or quotes a credential.
 */
import { Agent, type AgentOptions, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** The TLS options the Kubernetes client sets on a request, which the Agent's connections take. */
const TLS_OPTIONS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized'] as const;

interface Prepared {
  readonly agent: Agent;
  /** The credentials of every request, when they never change; otherwise asked for each time. */
  readonly fixed?: Credentials;
}

interface Credentials {
  readonly headers: Readonly<Record<string, string>>;
  /** `user:password` (HTTP basic authentication), as the Kubernetes client sets it. */
  readonly auth?: string;
}

export class KubeconfigCredentials {
  private prepared: Promise<Prepared> | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly agentOptions: AgentOptions,
  ) {}

  /** Sets the request's agent and credentials; throws what the Kubernetes client throws. */
  async apply(request: RequestOptions): Promise<void> {
    this.prepared ??= this.prepare().catch((error: unknown) => {
      // A failure (an exec plugin that failed once) is not kept: the next request asks again.
      this.prepared = undefined;
      throw error;
    });
    const { agent, fixed } = await this.prepared;
    if (fixed) {
      request.headers = { ...request.headers, ...fixed.headers };
      if (fixed.auth !== undefined) request.auth = fixed.auth;
    } else {
      // What the client sets (its token, and the client certificate a plugin may hand out).
      await this.kc.applyToHTTPSOptions(request);
    }
    request.agent = agent;
  }

  private async prepare(): Promise<Prepared> {
    const user = this.kc.getCurrentUser();
    // Exec plugins and auth providers hand out credentials that expire.
    if (user?.exec || user?.authProvider) return { agent: new Agent(this.agentOptions) };
    const template = await this.applied();
    const tls: AgentOptions = {};
    for (const key of TLS_OPTIONS) {
      if (template[key] !== undefined) Object.assign(tls, { [key]: template[key] });
    }
    return { agent: new Agent({ ...this.agentOptions, ...tls }), fixed: credentialsOf(template) };
  }

  /** What the Kubernetes client sets on a request: TLS options, headers, basic auth. */
  private async applied(): Promise<RequestOptions> {
    const options: RequestOptions = { headers: {} };
    await this.kc.applyToHTTPSOptions(options);
    return options;
  }
}

function credentialsOf(options: RequestOptions): Credentials {
  const value = (options.headers as Record<string, unknown> | undefined)?.Authorization;
  return {
    headers: typeof value === 'string' ? { Authorization: value } : {},
    ...(typeof options.auth === 'string' ? { auth: options.auth } : {}),
  };
}
