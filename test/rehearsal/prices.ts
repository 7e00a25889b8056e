/**
 * Public list prices of what a rehearsal run uses, US East (N. Virginia), on-demand, first tier,
 * no free tier, as AWS's pricing pages publish them (read on 2026-11-27): Lambda (Arm), Step
 * Functions (Standard), SQS (standard queue), S3 Standard requests, KMS, Fargate (Linux/ARM),
 * the EBS direct APIs and X-Ray. EC2, STS and EKS API calls are not billed. Not priced: storage,
 * data transfer and CloudWatch Logs ingestion (they depend on retention and volume, not on runs).
 */
import type { Usage } from './meter.js';

export const PRICES_READ_ON = '2026-11-27';

export const PRICES = {
  lambdaRequest: 0.2 / 1_000_000,
  lambdaArmGbSecond: 0.0000133334,
  stateTransition: 0.025 / 1_000,
  sqsRequest: 0.4 / 1_000_000,
  /** PUT, COPY, POST, LIST. */
  s3TierOneRequest: 0.005 / 1_000,
  /** GET and every other request but DELETE (free). */
  s3TierTwoRequest: 0.0004 / 1_000,
  kmsRequest: 0.03 / 10_000,
  fargateArmVcpuSecond: 0.03238 / 3_600,
  fargateArmGbSecond: 0.00356 / 3_600,
  ebsListBlocks: 0.0006 / 1_000,
  ebsGetBlock: 0.003 / 1_000,
  ebsPutBlock: 0.006 / 1_000,
  /** Traces recorded; an upper bound: one per traced invocation. */
  xrayTrace: 5 / 1_000_000,
} as const;

const S3_TIER_ONE = new Set([
  'PutObject',
  'CopyObject',
  'CreateMultipartUpload',
  'UploadPart',
  'CompleteMultipartUpload',
  'ListObjectsV2',
  'ListBucketVersions',
  'ListBucketMultipartUploads',
  'ListParts',
]);
const S3_FREE = new Set(['DeleteObject', 'DeleteObjects']);

export interface CostLine {
  readonly what: string;
  readonly quantity: number;
  readonly unit: string;
  readonly dollars: number;
}

function requestLines(requests: Readonly<Record<string, number>>): CostLine[] {
  const sum = (test: (service: string, op: string) => boolean) =>
    Object.entries(requests)
      .filter(([key]) => test(key.split(':')[0] ?? '', key.split(':')[1] ?? ''))
      .reduce((total, [, n]) => total + n, 0);
  const lines: [string, number, number][] = [
    ['SQS requests', sum((s) => s === 'sqs'), PRICES.sqsRequest],
    ['S3 PUT/COPY/POST/LIST', sum((s, op) => s === 's3' && S3_TIER_ONE.has(op)), PRICES.s3TierOneRequest],
    [
      'S3 GET and other',
      sum((s, op) => s === 's3' && !S3_TIER_ONE.has(op) && !S3_FREE.has(op)),
      PRICES.s3TierTwoRequest,
    ],
    ['KMS requests', sum((s) => s === 'kms'), PRICES.kmsRequest],
    ['EBS list blocks', sum((s, op) => s === 'ebs' && /^List/.test(op)), PRICES.ebsListBlocks],
    ['EBS get blocks', sum((s, op) => s === 'ebs' && op === 'GetSnapshotBlock'), PRICES.ebsGetBlock],
    ['EBS put blocks', sum((s, op) => s === 'ebs' && op === 'PutSnapshotBlock'), PRICES.ebsPutBlock],
  ];
  return lines.map(([what, quantity, price]) => ({
    what,
    quantity,
    unit: 'requests',
    dollars: quantity * price,
  }));
}

/** The priced lines of a usage, and nothing left out that the meter counted. */
export function priced(usage: Usage): CostLine[] {
  return [
    {
      what: 'Lambda requests',
      quantity: usage.lambda.invocations,
      unit: 'invocations',
      dollars: usage.lambda.invocations * PRICES.lambdaRequest,
    },
    {
      what: 'Lambda duration (Arm)',
      quantity: usage.lambda.gbSeconds,
      unit: 'GB-s',
      dollars: usage.lambda.gbSeconds * PRICES.lambdaArmGbSecond,
    },
    {
      what: 'X-Ray traces (upper bound)',
      quantity: usage.lambda.invocations,
      unit: 'traces',
      dollars: usage.lambda.invocations * PRICES.xrayTrace,
    },
    {
      what: 'Step Functions transitions',
      quantity: usage.stateTransitions,
      unit: 'transitions',
      dollars: usage.stateTransitions * PRICES.stateTransition,
    },
    ...requestLines(usage.requests),
    {
      what: 'Fargate vCPU (Arm)',
      quantity: usage.fargate.vcpuSeconds,
      unit: 'vCPU-s',
      dollars: usage.fargate.vcpuSeconds * PRICES.fargateArmVcpuSecond,
    },
    {
      what: 'Fargate memory (Arm)',
      quantity: usage.fargate.gbSeconds,
      unit: 'GB-s',
      dollars: usage.fargate.gbSeconds * PRICES.fargateArmGbSecond,
    },
  ];
}

/** What a usage adds to an earlier one (the meter counts from the rehearsal's start). */
export function usageSince(later: Usage, earlier: Usage): Usage {
  const requests: Record<string, number> = {};
  for (const [key, n] of Object.entries(later.requests)) {
    const delta = n - (earlier.requests[key] ?? 0);
    if (delta > 0) requests[key] = delta;
  }
  const invocationsByFunction: Record<string, number> = {};
  for (const [key, n] of Object.entries(later.invocationsByFunction)) {
    const delta = n - (earlier.invocationsByFunction[key] ?? 0);
    if (delta > 0) invocationsByFunction[key] = delta;
  }
  return {
    lambda: {
      invocations: later.lambda.invocations - earlier.lambda.invocations,
      gbSeconds: later.lambda.gbSeconds - earlier.lambda.gbSeconds,
    },
    stateTransitions: later.stateTransitions - earlier.stateTransitions,
    requests,
    fargate: {
      tasks: later.fargate.tasks - earlier.fargate.tasks,
      vcpuSeconds: later.fargate.vcpuSeconds - earlier.fargate.vcpuSeconds,
      gbSeconds: later.fargate.gbSeconds - earlier.fargate.gbSeconds,
    },
    invocationsByFunction,
  };
}
