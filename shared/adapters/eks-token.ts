/**
 * EKS authentication from Lambda: a bearer token that is a presigned STS GetCallerIdentity URL
 * (`k8s-aws-v1.` + base64url), bound to the cluster by the signed `x-k8s-aws-id` header, and
 * a KubeConfig for the cluster built from eks:DescribeCluster. Tokens live 15 minutes; they
 * are reused for 10.
 */
import { DescribeClusterCommand, type EKSClient } from '@aws-sdk/client-eks';
import { KubeConfig } from '@kubernetes/client-node';
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import { LifeboatError } from '../domain/errors.js';

export async function eksToken(options: {
  clusterName: string;
  region: string;
  credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
}): Promise<string> {
  const hostname = `sts.${options.region}.amazonaws.com`;
  const signer = new SignatureV4({
    service: 'sts',
    region: options.region,
    credentials: options.credentials,
    sha256: Hash.bind(null, 'sha256'),
  });
  const presigned = await signer.presign(
    new HttpRequest({
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, 'x-k8s-aws-id': options.clusterName },
    }),
    { expiresIn: 60 },
  );
  const query = Object.entries(presigned.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  const url = `https://${hostname}/?${query}`;
  return `k8s-aws-v1.${Buffer.from(url).toString('base64url')}`;
}

const cache = new Map<string, { kc: KubeConfig; expires: number }>();

export async function eksKubeConfig(options: {
  clusterName: string;
  region: string;
  eks: EKSClient;
  credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
}): Promise<KubeConfig> {
  const cached = cache.get(options.clusterName);
  if (cached && cached.expires > Date.now()) return cached.kc;
  const { cluster } = await options.eks.send(new DescribeClusterCommand({ name: options.clusterName }));
  if (!cluster?.endpoint || !cluster.certificateAuthority?.data) {
    throw new LifeboatError(
      `EKS cluster ${options.clusterName} has no endpoint or certificate authority yet`,
    );
  }
  const token = await eksToken(options);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: options.clusterName,
        server: cluster.endpoint,
        caData: cluster.certificateAuthority.data,
        skipTLSVerify: false,
      },
    ],
    users: [{ name: 'lifeboat', token }],
    contexts: [{ name: options.clusterName, cluster: options.clusterName, user: 'lifeboat' }],
    currentContext: options.clusterName,
  });
  cache.set(options.clusterName, { kc, expires: Date.now() + 10 * 60_000 });
  return kc;
}
