/**
 * SnapshotBlocks over the EBS direct APIs (@aws-sdk/client-ebs). Every call is retried with
 * backoff on throttling, 5xx, network failures and (for reads) a body that breaks off or fails
 * its SHA-256: the SDK's own retries end when the response starts, a block's body is read after.
 * What still fails becomes RetryableError or CloudRequestRefused, as in ebs-snapshotter.
 * Credentials and region are the client's: build one per account and region (snapshotBlocksFor).
 * Never logs; never returns or sends a block without its checksum.
 */
import { createHash } from 'node:crypto';
import {
  CompleteSnapshotCommand,
  EBSClient,
  EBSServiceException,
  GetSnapshotBlockCommand,
  ListChangedBlocksCommand,
  ListSnapshotBlocksCommand,
  PutSnapshotBlockCommand,
  StartSnapshotCommand,
  type StartSnapshotCommandOutput,
} from '@aws-sdk/client-ebs';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { CloudRequestRefused, RetryableError } from '../domain/errors.js';
import type {
  BlockPage,
  ChangedBlockRef,
  EbsSnapshotStatus,
  SnapshotBlockData,
  SnapshotBlockRef,
  SnapshotBlocks,
  StartedSnapshot,
} from '../ports/snapshot-blocks.js';
import { awsErrorOf } from './aws-errors.js';

/** EBS direct API error codes that mean "later" (AWS: always retry these and 5xx). */
const RETRYABLE_CODES = new Set([
  'RequestThrottledException',
  'ThrottlingException',
  'InternalServerException',
  'ConcurrentLimitExceededException',
  'ServiceUnavailable',
]);

/** Pauses between attempts (jittered ±50%): about 45 s in all before a call gives up. */
const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [200, 500, 1000, 2000, 4000, 8000, 12000, 16000];

/** AWS's page sizes for both listings: 100 to 10,000 blocks. */
const MIN_PAGE = 100;
const MAX_PAGE = 10_000;

const sha256Base64 = (data: Uint8Array): string => createHash('sha256').update(data).digest('base64');

/** The error a failed EBS call becomes; an abort or a bug is passed on unchanged. */
export function ebsErrorOf(
  error: unknown,
  context: { what: string; signal?: AbortSignal | undefined },
): unknown {
  return awsErrorOf(error, {
    ...context,
    service: EBSServiceException,
    retryableCodes: RETRYABLE_CODES,
    detail: (e) => {
      const reason = (e as { Reason?: unknown }).Reason;
      return typeof reason === 'string' ? reason : undefined;
    },
  });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class EbsSnapshotBlocks implements SnapshotBlocks {
  private readonly client: EBSClient;
  private readonly retryDelaysMs: readonly number[];
  private readonly pageSize: number;

  constructor(options: { client: EBSClient; retryDelaysMs?: readonly number[]; pageSize?: number }) {
    this.client = options.client;
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.pageSize = Math.min(MAX_PAGE, Math.max(MIN_PAGE, Math.floor(options.pageSize ?? MAX_PAGE)));
  }

  /** Runs `call` until it succeeds, fails for good, or the retries run out. */
  private async retried<T>(
    what: string,
    signal: AbortSignal | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        const mapped = ebsErrorOf(error, { what, signal });
        const delay = this.retryDelaysMs[attempt];
        if (!(mapped instanceof RetryableError) || delay === undefined || signal?.aborted) throw mapped;
        await sleep(delay * (0.5 + Math.random()), signal);
      }
    }
  }

  async *listSnapshotBlocks(options: {
    snapshotId: string;
    startingBlockIndex?: number;
    signal?: AbortSignal;
  }): AsyncIterable<BlockPage<SnapshotBlockRef>> {
    const { snapshotId, signal } = options;
    let token: string | undefined;
    do {
      const page = await this.retried(`ListSnapshotBlocks ${snapshotId}`, signal, () =>
        this.client.send(
          new ListSnapshotBlocksCommand({
            SnapshotId: snapshotId,
            MaxResults: this.pageSize,
            ...(token
              ? { NextToken: token }
              : options.startingBlockIndex
                ? { StartingBlockIndex: options.startingBlockIndex }
                : {}),
          }),
          { abortSignal: signal },
        ),
      );
      const blocks: SnapshotBlockRef[] = [];
      for (const b of page.Blocks ?? [])
        if (b.BlockIndex !== undefined && b.BlockToken)
          blocks.push({ index: b.BlockIndex, token: b.BlockToken });
      yield { volumeSizeGiB: page.VolumeSize ?? 0, blockSizeBytes: page.BlockSize ?? 0, blocks };
      token = page.NextToken ?? undefined;
    } while (token);
  }

  async *listChangedBlocks(options: {
    firstSnapshotId: string;
    secondSnapshotId: string;
    startingBlockIndex?: number;
    signal?: AbortSignal;
  }): AsyncIterable<BlockPage<ChangedBlockRef>> {
    const { firstSnapshotId, secondSnapshotId, signal } = options;
    let token: string | undefined;
    do {
      const page = await this.retried(
        `ListChangedBlocks ${firstSnapshotId} → ${secondSnapshotId}`,
        signal,
        () =>
          this.client.send(
            new ListChangedBlocksCommand({
              FirstSnapshotId: firstSnapshotId,
              SecondSnapshotId: secondSnapshotId,
              MaxResults: this.pageSize,
              ...(token
                ? { NextToken: token }
                : options.startingBlockIndex
                  ? { StartingBlockIndex: options.startingBlockIndex }
                  : {}),
            }),
            { abortSignal: signal },
          ),
      );
      const blocks: ChangedBlockRef[] = [];
      for (const b of page.ChangedBlocks ?? []) {
        if (b.BlockIndex === undefined) continue;
        blocks.push({
          index: b.BlockIndex,
          ...(b.FirstBlockToken ? { firstToken: b.FirstBlockToken } : {}),
          ...(b.SecondBlockToken ? { secondToken: b.SecondBlockToken } : {}),
        });
      }
      yield { volumeSizeGiB: page.VolumeSize ?? 0, blockSizeBytes: page.BlockSize ?? 0, blocks };
      token = page.NextToken ?? undefined;
    } while (token);
  }

  async getSnapshotBlock(options: {
    snapshotId: string;
    blockIndex: number;
    blockToken: string;
    signal?: AbortSignal;
  }): Promise<SnapshotBlockData> {
    const { snapshotId, blockIndex, signal } = options;
    const what = `GetSnapshotBlock ${snapshotId} #${blockIndex}`;
    return this.retried(what, signal, async () => {
      const res = await this.client.send(
        new GetSnapshotBlockCommand({
          SnapshotId: snapshotId,
          BlockIndex: blockIndex,
          BlockToken: options.blockToken,
        }),
        { abortSignal: signal },
      );
      const data = await res.BlockData?.transformToByteArray();
      if (!data) throw new RetryableError(`${what}: no block data in the answer`);
      if (res.DataLength !== undefined && res.DataLength !== data.length)
        throw new RetryableError(`${what}: ${data.length} bytes read, ${res.DataLength} announced`);
      if (res.ChecksumAlgorithm !== 'SHA256' || !res.Checksum)
        throw new CloudRequestRefused(`${what}: the answer carries no SHA-256 checksum`, {
          code: 'MissingChecksum',
        });
      const sha256 = createHash('sha256').update(data).digest();
      if (sha256.toString('base64') !== res.Checksum)
        throw new RetryableError(`${what}: the data does not match its SHA-256 checksum`);
      return { data, sha256 };
    });
  }

  async startSnapshot(options: {
    volumeSizeGiB: number;
    parentSnapshotId?: string;
    encrypted?: boolean;
    kmsKeyArn?: string;
    tags?: Readonly<Record<string, string>>;
    description?: string;
    clientToken?: string;
    timeoutMinutes?: number;
    signal?: AbortSignal;
  }): Promise<StartedSnapshot> {
    const what = `StartSnapshot of ${options.volumeSizeGiB} GiB`;
    const tags = Object.entries(options.tags ?? {}).map(([Key, Value]) => ({ Key, Value }));
    const send = (): Promise<StartSnapshotCommandOutput> =>
      this.client.send(
        new StartSnapshotCommand({
          VolumeSize: options.volumeSizeGiB,
          ...(options.parentSnapshotId ? { ParentSnapshotId: options.parentSnapshotId } : {}),
          ...(options.encrypted ? { Encrypted: true } : {}),
          ...(options.kmsKeyArn ? { KmsKeyArn: options.kmsKeyArn } : {}),
          ...(tags.length > 0 ? { Tags: tags } : {}),
          ...(options.description ? { Description: options.description } : {}),
          ...(options.clientToken ? { ClientToken: options.clientToken } : {}),
          ...(options.timeoutMinutes ? { Timeout: options.timeoutMinutes } : {}),
        }),
        { abortSignal: options.signal },
      );
    let started: StartSnapshotCommandOutput;
    if (options.clientToken) {
      started = await this.retried(what, options.signal, send);
    } else {
      // Without a client token a retry after a lost answer would leave a second snapshot behind.
      try {
        started = await send();
      } catch (error) {
        throw ebsErrorOf(error, { what, signal: options.signal });
      }
    }
    if (!started.SnapshotId)
      throw new CloudRequestRefused(`${what}: no snapshot id returned`, { code: 'NoSnapshotId' });
    return {
      snapshotId: started.SnapshotId,
      status: (started.Status ?? 'pending') as EbsSnapshotStatus,
      blockSizeBytes: started.BlockSize ?? 0,
      volumeSizeGiB: started.VolumeSize ?? options.volumeSizeGiB,
      ...(started.KmsKeyArn ? { kmsKeyArn: started.KmsKeyArn } : {}),
    };
  }

  async putSnapshotBlock(options: {
    snapshotId: string;
    blockIndex: number;
    data: Uint8Array;
    progressPercent?: number;
    signal?: AbortSignal;
  }): Promise<void> {
    const { snapshotId, blockIndex, data, signal } = options;
    const checksum = sha256Base64(data);
    await this.retried(`PutSnapshotBlock ${snapshotId} #${blockIndex}`, signal, () =>
      this.client.send(
        new PutSnapshotBlockCommand({
          SnapshotId: snapshotId,
          BlockIndex: blockIndex,
          BlockData: data,
          DataLength: data.length,
          Checksum: checksum,
          ChecksumAlgorithm: 'SHA256',
          ...(options.progressPercent === undefined
            ? {}
            : { Progress: Math.max(0, Math.min(100, Math.round(options.progressPercent))) }),
        }),
        { abortSignal: signal },
      ),
    );
  }

  async completeSnapshot(options: {
    snapshotId: string;
    changedBlocksCount: number;
    signal?: AbortSignal;
  }): Promise<EbsSnapshotStatus> {
    const { snapshotId, signal } = options;
    const res = await this.retried(`CompleteSnapshot ${snapshotId}`, signal, () =>
      this.client.send(
        new CompleteSnapshotCommand({
          SnapshotId: snapshotId,
          ChangedBlocksCount: options.changedBlocksCount,
        }),
        { abortSignal: signal },
      ),
    );
    return (res.Status ?? 'pending') as EbsSnapshotStatus;
  }
}

/** Credentials of a role assumed from the given (or ambient) ones: a restore's target account. */
export function assumedRoleCredentials(options: {
  region: string;
  roleArn: string;
  externalId?: string;
  endpoint?: string;
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
}): AwsCredentialIdentityProvider {
  return fromTemporaryCredentials({
    params: {
      RoleArn: options.roleArn,
      RoleSessionName: 'lifeboat-data-mover',
      ...(options.externalId ? { ExternalId: options.externalId } : {}),
    },
    clientConfig: { region: options.region, ...(options.endpoint ? { endpoint: options.endpoint } : {}) },
    ...(options.credentials ? { masterCredentials: options.credentials } : {}),
  });
}

/**
 * EBS direct APIs for one account and region: the ambient credentials, given ones, or a role
 * assumed from them (a restore's target account; `externalId` as the role's trust policy asks).
 * The SDK retries throttling with client-side rate limiting (adaptive mode); sockets enough for
 * the data mover's concurrency.
 */
export function snapshotBlocksFor(options: {
  region: string;
  endpoint?: string;
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  roleArn?: string;
  externalId?: string;
  maxSockets?: number;
  /** Blocks per listing page (AWS: 100–10,000; default 10,000). */
  pageSize?: number;
}): EbsSnapshotBlocks {
  const maxSockets = options.maxSockets ?? 128;
  const credentials = options.roleArn
    ? assumedRoleCredentials({ ...options, roleArn: options.roleArn })
    : options.credentials;
  return new EbsSnapshotBlocks({
    ...(options.pageSize ? { pageSize: options.pageSize } : {}),
    client: new EBSClient({
      region: options.region,
      maxAttempts: 4,
      retryMode: 'adaptive',
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(credentials ? { credentials } : {}),
      requestHandler: { httpAgent: { maxSockets }, httpsAgent: { maxSockets } },
    }),
  });
}
