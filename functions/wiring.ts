/**
 * The deployed functions' adapters, created once per Lambda container from the environment:
 * the S3 store, the SQS queue, Step Functions callbacks, and clusters reached with EKS tokens.
 */
import { EKSClient } from '@aws-sdk/client-eks';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { eksKubeConfig } from '../shared/adapters/eks-token.js';
import { KubernetesCluster } from '../shared/adapters/kubernetes-cluster.js';
import { S3ObjectStore } from '../shared/adapters/s3-object-store.js';
import { SfnTaskCallbacks } from '../shared/adapters/sfn-task-callbacks.js';
import { SqsWorkQueue } from '../shared/adapters/sqs-work-queue.js';
import { systemClock } from '../shared/adapters/system-clock.js';
import type { Cluster } from '../shared/ports/cluster.js';
import { readEnv, requireQueueUrl } from '../shared/runtime/env.js';

export const env = readEnv();
const retries = { maxAttempts: 8 };
const credentials = fromNodeProviderChain();

export const clock = systemClock;
export const store = new S3ObjectStore({
  client: new S3Client({ ...retries, region: env.AWS_REGION }),
  bucket: env.LIFEBOAT_BUCKET,
  prefix: env.LIFEBOAT_PREFIX,
});
export const callbacks = new SfnTaskCallbacks(new SFNClient({ ...retries, region: env.AWS_REGION }));

export function queue(): SqsWorkQueue {
  return new SqsWorkQueue({
    client: new SQSClient({ ...retries, region: env.AWS_REGION }),
    queueUrl: requireQueueUrl(env),
  });
}

const eks = new EKSClient({ ...retries, region: env.AWS_REGION });

export async function clusterNamed(name: string): Promise<Cluster> {
  return new KubernetesCluster(
    await eksKubeConfig({ clusterName: name, region: env.AWS_REGION, eks, credentials }),
  );
}
