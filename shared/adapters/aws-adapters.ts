/**
 * The adapters a deployed function uses, built from its configuration: the S3 store, the SQS
 * queue, Step Functions callbacks, clusters reached with EKS tokens and the EBS snapshotter
 * (EC2 in the function's region). SDK clients retry throttling and 5xx up to eight times with
 * backoff.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { EKSClient } from '@aws-sdk/client-eks';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import type { ObjectStore } from '../ports/object-store.js';
import type { PodExec } from '../ports/pod-exec.js';
import type { Snapshotter } from '../ports/snapshotter.js';
import type { TaskCallbacks } from '../ports/task-callbacks.js';
import type { WorkQueue } from '../ports/work-queue.js';
import { EbsSnapshotter } from './ebs-snapshotter.js';
import { eksKubeConfig } from './eks-token.js';
import { KubernetesCluster } from './kubernetes-cluster.js';
import { KubernetesPodExec } from './kubernetes-pod-exec.js';
import { S3ObjectStore } from './s3-object-store.js';
import { SfnTaskCallbacks } from './sfn-task-callbacks.js';
import { SqsWorkQueue } from './sqs-work-queue.js';

export interface AwsAdapters {
  readonly store: ObjectStore;
  readonly callbacks: TaskCallbacks;
  /** Created on first use: only the volume steps reach EC2. */
  snapshotter(): Snapshotter;
  queue(queueUrl: string): WorkQueue;
  clusterNamed(name: string): Promise<KubernetesCluster>;
  /** Exec in the pods of a cluster, by name (hooks). */
  podExecNamed(name: string): Promise<PodExec>;
}

export function awsAdapters(options: {
  region: string;
  bucket: string;
  prefix: string;
  forcePathStyle?: boolean;
}): AwsAdapters {
  const base = { region: options.region, maxAttempts: 8 };
  const credentials = fromNodeProviderChain();
  const eks = new EKSClient(base);
  const sqs = new SQSClient(base);
  let snapshotter: Snapshotter | undefined;
  return {
    store: new S3ObjectStore({
      client: new S3Client({ ...base, forcePathStyle: options.forcePathStyle ?? false }),
      bucket: options.bucket,
      prefix: options.prefix,
    }),
    callbacks: new SfnTaskCallbacks(new SFNClient(base)),
    snapshotter: () => {
      snapshotter ??= new EbsSnapshotter({ client: new EC2Client(base) });
      return snapshotter;
    },
    queue: (queueUrl) => new SqsWorkQueue({ client: sqs, queueUrl }),
    clusterNamed: async (name) =>
      new KubernetesCluster(
        await eksKubeConfig({ clusterName: name, region: options.region, eks, credentials }),
      ),
    podExecNamed: async (name) =>
      new KubernetesPodExec(
        await eksKubeConfig({ clusterName: name, region: options.region, eks, credentials }),
      ),
  };
}

/** Native EBS snapshots in a region with the default credential chain (the local `lifeboat` command). */
export function ebsSnapshotterFor(options: { region: string }): Snapshotter {
  return new EbsSnapshotter({ client: new EC2Client({ region: options.region, maxAttempts: 8 }) });
}
