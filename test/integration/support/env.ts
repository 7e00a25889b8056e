/**
 * What integration tests know of the running local environment: clusters (as client-node
 * KubeConfigs), the moto endpoint and its two accounts, and the DR cluster on demand.
 */
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, inject } from 'vitest';
import { type ClusterInfo, startCluster, stopCluster } from '../../env/cluster.js';
import type { TestEnvironment } from '../../env/environment.js';

export function testEnv(): TestEnvironment {
  return inject('lifeboatEnv');
}

export function kubeConfigFor(cluster: ClusterInfo): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  return kc;
}

/** A name unique to this run, for namespaces, buckets and queues shared by parallel tests. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export interface AwsClientConfig {
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
  readonly forcePathStyle: true;
}

/** Client settings for moto; static keys land in the source account. */
export function awsConfig(options: { region?: string } = {}): AwsClientConfig {
  const env = testEnv();
  return {
    endpoint: env.aws.endpoint,
    region: options.region ?? env.aws.region,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    forcePathStyle: true,
  };
}

/**
 * The DR cluster: the kept-up environment's if it has one, otherwise started for this test
 * file and stopped after it.
 */
export function useDrCluster(): () => ClusterInfo {
  let cluster: ClusterInfo | undefined;
  let ownCluster = false;
  beforeAll(async () => {
    const env = testEnv();
    if (env.clusters.dr) {
      cluster = env.clusters.dr;
      return;
    }
    cluster = await startCluster({ name: uniqueName('dr'), rootDir: env.rootDir, tools: env.tools });
    ownCluster = true;
  });
  afterAll(async () => {
    if (cluster && ownCluster) await stopCluster(cluster);
  });
  return () => {
    if (!cluster) throw new Error('the DR cluster is only available inside tests');
    return cluster;
  };
}
