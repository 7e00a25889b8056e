/**
 * EKS, for the rehearsal: the local cluster plays the EKS cluster the stack names, and its
 * apiserver sends the functions' bearer tokens to this TokenReview webhook, which does what EKS's
 * authenticator does — verifies the presigned STS GetCallerIdentity URL (its SigV4 signature over
 * `x-k8s-aws-id: <cluster>`, recomputed with the key's secret, and its expiry), finds the role
 * behind the key, and maps it through the template's access entries for that cluster to a
 * username and Kubernetes groups. Access policies become groups bound to ClusterRoles with the
 * permissions AWS documents for them. Everything else a function may do in the cluster comes
 * from the RBAC manifest Lifeboat ships (infra/kubernetes/rbac.yaml), applied as the README says.
 */

import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type KubeConfig, type KubernetesObject, KubernetesObjectApi } from '@kubernetes/client-node';
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { parseAllDocuments } from 'yaml';
import { ROOT } from './assembly.js';
import type { Deployment } from './deploy.js';
import { type Json, resolve, resolveString, resourcesOf } from './template.js';

export const RBAC_MANIFEST = join(ROOT, 'infra', 'kubernetes', 'rbac.yaml');

/** The permissions of EKS access policies, per AWS's documentation of each. */
const ACCESS_POLICY_RULES: Record<string, { apiGroups: string[]; resources: string[]; verbs: string[] }[]> = {
  AmazonEKSClusterAdminPolicy: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
  AmazonEKSAdminViewPolicy: [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] }],
};

export interface AccessEntry {
  readonly cluster: string;
  readonly principalArn: string;
  readonly groups: readonly string[];
  readonly accessPolicies: readonly string[];
}

export function accessEntriesOf(deployment: Deployment): AccessEntry[] {
  return resourcesOf(deployment.assembly.template, 'AWS::EKS::AccessEntry').map(([, r]) => {
    const p = resolve(deployment.resolver, (r.Properties ?? {}) as Json) as Record<string, Json>;
    return {
      cluster: String(p.ClusterName),
      principalArn: resolveString(deployment.resolver, p.PrincipalArn ?? null),
      groups: ((p.KubernetesGroups ?? []) as Json[]).map(String),
      accessPolicies: ((p.AccessPolicies ?? []) as { PolicyArn: string }[]).map(
        (a) => a.PolicyArn.split('/').pop() ?? '',
      ),
    };
  });
}

const policyGroup = (policy: string) => `eks-access-policy:${policy}`;

/** How long EKS accepts a token after its X-Amz-Date (aws-iam-authenticator: 15 minutes). */
const TOKEN_LIFETIME_MS = 15 * 60_000;

/** Whether a presigned GetCallerIdentity URL was signed, for this cluster, by that key's secret. */
async function verifiedKey(options: {
  url: URL;
  cluster: string;
  deployment: Deployment;
}): Promise<string | undefined> {
  const q = options.url.searchParams;
  if (q.get('Action') !== 'GetCallerIdentity') return undefined;
  const [accessKeyId = '', , region = ''] = (q.get('X-Amz-Credential') ?? '').split('/');
  const secret = options.deployment.secretOf(accessKeyId);
  const stamp = q.get('X-Amz-Date') ?? '';
  const signedAt = new Date(
    `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`,
  );
  const expires = Number(q.get('X-Amz-Expires') ?? 0);
  // As EKS's authenticator: a token is signed to expire within 60 s, yet accepted for 15 minutes
  // after its date (clients cache it for less, as Lifeboat does for 10).
  const fresh =
    signedAt.getTime() + TOKEN_LIFETIME_MS >= Date.now() && signedAt.getTime() <= Date.now() + 60_000;
  if (!secret || Number.isNaN(signedAt.getTime()) || expires < 1 || expires > 60 || !fresh) return undefined;
  const signer = new SignatureV4({
    service: 'sts',
    region,
    credentials: {
      accessKeyId,
      secretAccessKey: secret,
      sessionToken: q.get('X-Amz-Security-Token') ?? undefined,
    },
    sha256: Hash.bind(null, 'sha256'),
  });
  const presigned = await signer.presign(
    new HttpRequest({
      method: 'GET',
      protocol: 'https:',
      hostname: options.url.hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: q.get('Version') ?? '' },
      headers: { host: options.url.hostname, 'x-k8s-aws-id': options.cluster },
    }),
    { expiresIn: expires, signingDate: signedAt },
  );
  return presigned.query?.['X-Amz-Signature'] === q.get('X-Amz-Signature') ? accessKeyId : undefined;
}

/** The TokenReview webhook of one cluster. */
export class TokenWebhook {
  private server: Server | undefined;
  /** Tokens refused, with why, for the report. */
  readonly refused: string[] = [];

  constructor(
    private readonly options: { cluster: string; deployment: Deployment; entries: readonly AccessEntry[] },
  ) {}

  async start(): Promise<string> {
    this.server = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const c of request) chunks.push(c as Buffer);
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
        spec?: { token?: string };
      };
      const status = await this.review(review.spec?.token ?? '');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status }));
    });
    await new Promise<void>((done) => this.server?.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/authenticate`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }

  private async review(token: string): Promise<Record<string, unknown>> {
    if (!token.startsWith('k8s-aws-v1.')) return { authenticated: false };
    const url = new URL(Buffer.from(token.slice('k8s-aws-v1.'.length), 'base64url').toString('utf8'));
    const { deployment, cluster } = this.options;
    const key = await verifiedKey({ url, cluster, deployment });
    const holder = key ? deployment.holderOf(key) : undefined;
    const entry = this.options.entries.find(
      (e) => e.cluster === cluster && e.principalArn === holder?.roleArn,
    );
    if (!holder || !entry) {
      this.refused.push(
        `${holder?.caller ?? 'unknown key'}: ${key ? 'no access entry' : 'signature not valid'}`,
      );
      return { authenticated: false, error: 'no access entry for this principal' };
    }
    const role = holder.roleArn.split('/').pop() ?? '';
    return {
      authenticated: true,
      user: {
        username: `arn:aws:sts::${deployment.target.account}:assumed-role/${role}/${holder.caller}`,
        uid: `aws-iam-authenticator:${deployment.target.account}:${role}`,
        groups: [...entry.groups, ...entry.accessPolicies.map(policyGroup)],
      },
    };
  }
}

async function apply(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const object of objects) await api.create(object);
}

/** The cluster's own side of EKS access: what each access policy allows, as ClusterRoles. */
export async function installAccessPolicies(kc: KubeConfig): Promise<void> {
  await apply(
    kc,
    Object.entries(ACCESS_POLICY_RULES).flatMap(([policy, rules]) => {
      const name = `eks-access-policy-${policy.toLowerCase()}`;
      const rbac = 'rbac.authorization.k8s.io/v1';
      return [
        { apiVersion: rbac, kind: 'ClusterRole', metadata: { name }, rules } as KubernetesObject,
        {
          apiVersion: rbac,
          kind: 'ClusterRoleBinding',
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: policyGroup(policy) }],
        } as KubernetesObject,
      ];
    }),
  );
}

/** Lifeboat's RBAC manifest, as `kubectl apply -f infra/kubernetes/rbac.yaml` applies it. */
export async function installLifeboatRbac(kc: KubeConfig, manifest = RBAC_MANIFEST): Promise<void> {
  const documents = parseAllDocuments(await readFile(manifest, 'utf8'));
  await apply(
    kc,
    documents.map((d) => d.toJSON() as KubernetesObject).filter((o) => o !== null),
  );
}
