/**
 * CSI snapshots over the Kubernetes API (`snapshot.storage.k8s.io/v1`), through the cluster
 * adapter's LIST, create, read, merge patch and delete (so retries and credentials are the cluster's).
 * A cluster that does not serve the snapshot API has no classes; nothing here waits.
 */

import { ResourceGone } from '../domain/errors.js';
import type { ApiResource } from '../domain/kubernetes/api-resources.js';
import { parseQuantity } from '../domain/kubernetes/quantity.js';
import type { SnapshotClassFacts } from '../domain/volumes/csi-snapshot-class.js';
import type { VolumeSnapshotContentLook, VolumeSnapshotLook } from '../domain/volumes/operations.js';
import type { Cluster, ClusterWriter } from '../ports/cluster.js';
import type { CsiSnapshots } from '../ports/csi-snapshots.js';

const GROUP = 'snapshot.storage.k8s.io';
const API_VERSION = `${GROUP}/v1`;
const CLASSES: ApiResource = {
  group: GROUP,
  version: 'v1',
  resource: 'volumesnapshotclasses',
  kind: 'VolumeSnapshotClass',
  shortNames: [],
  namespaced: false,
  verbs: ['list'],
};

const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const stringMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(record(v)).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );

/** `restoreSize` is a quantity on the VolumeSnapshot and bytes on the content (Velero's Value()). */
function bytesOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  const quantity = typeof value === 'string' ? parseQuantity(value) : undefined;
  // Value() rounds up to a whole byte.
  return quantity
    ? Number((quantity.numerator + quantity.denominator - 1n) / quantity.denominator)
    : undefined;
}

const errorMessage = (status: Record<string, unknown>): string | undefined => {
  const error = record(status.error);
  return Object.keys(error).length > 0 ? (text(error.message) ?? 'unknown error') : undefined;
};

const readyOf = (status: Record<string, unknown>): boolean | null =>
  typeof status.readyToUse === 'boolean' ? status.readyToUse : null;

export class KubernetesCsiSnapshots implements CsiSnapshots {
  private readonly cluster: Cluster & ClusterWriter;

  constructor(cluster: Cluster & ClusterWriter) {
    this.cluster = cluster;
  }

  async snapshotClasses(options?: {
    signal?: AbortSignal;
  }): Promise<readonly SnapshotClassFacts[] | undefined> {
    const classes: SnapshotClassFacts[] = [];
    let continueToken: string | undefined;
    try {
      do {
        const page = await this.cluster.listPage({
          resource: CLASSES,
          limit: 500,
          ...(continueToken ? { continueToken } : {}),
          ...(options?.signal ? { signal: options.signal } : {}),
        });
        for (const item of page.items) {
          const meta = record(item.metadata);
          classes.push({
            name: text(meta.name) ?? '',
            driver: text(item.driver) ?? '',
            labels: stringMap(meta.labels),
            annotations: stringMap(meta.annotations),
          });
        }
        continueToken = page.continueToken;
      } while (continueToken);
    } catch (error) {
      if (error instanceof ResourceGone) return undefined;
      throw error;
    }
    return classes;
  }

  async createVolumeSnapshot(options: {
    namespace: string;
    name: string;
    pvcName: string;
    className: string;
    labels: Readonly<Record<string, string>>;
    signal?: AbortSignal;
  }): Promise<{ created: boolean; creationTimestamp?: string }> {
    const outcome = await this.cluster.create({
      resource: 'volumesnapshots',
      object: {
        apiVersion: API_VERSION,
        kind: 'VolumeSnapshot',
        metadata: { namespace: options.namespace, name: options.name, labels: { ...options.labels } },
        spec: {
          source: { persistentVolumeClaimName: options.pvcName },
          volumeSnapshotClassName: options.className,
        },
      },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const object = outcome.result === 'created' ? outcome.created : outcome.existing;
    const creationTimestamp = text(record(object.metadata).creationTimestamp);
    return { created: outcome.result === 'created', ...(creationTimestamp ? { creationTimestamp } : {}) };
  }

  async readVolumeSnapshot(options: {
    namespace: string;
    name: string;
    signal?: AbortSignal;
  }): Promise<VolumeSnapshotLook> {
    const object = await this.cluster.read({
      resource: 'volumesnapshots',
      object: { apiVersion: API_VERSION, metadata: { namespace: options.namespace, name: options.name } },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!object) return { exists: false };
    const status = record(object.status);
    const bound = text(status.boundVolumeSnapshotContentName);
    const size = bytesOf(status.restoreSize);
    const error = errorMessage(status);
    return {
      exists: true,
      readyToUse: readyOf(status),
      ...(bound ? { boundContentName: bound } : {}),
      ...(size === undefined ? {} : { restoreSize: size }),
      ...(error ? { error } : {}),
    };
  }

  async readVolumeSnapshotContent(options: {
    name: string;
    signal?: AbortSignal;
  }): Promise<VolumeSnapshotContentLook | undefined> {
    const object = await this.cluster.read({
      resource: 'volumesnapshotcontents',
      object: { apiVersion: API_VERSION, metadata: { name: options.name } },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!object) return undefined;
    const spec = record(object.spec);
    const status = record(object.status);
    const handle = text(status.snapshotHandle);
    const size = bytesOf(status.restoreSize);
    const error = errorMessage(status);
    const driver = text(spec.driver);
    const deletionPolicy = text(spec.deletionPolicy);
    return {
      readyToUse: readyOf(status),
      ...(handle ? { snapshotHandle: handle } : {}),
      ...(size === undefined ? {} : { restoreSize: size }),
      ...(error ? { error } : {}),
      ...(driver ? { driver } : {}),
      ...(deletionPolicy ? { deletionPolicy } : {}),
    };
  }

  async deleteVolumeSnapshot(options: {
    namespace: string;
    name: string;
    contentName: string;
    signal?: AbortSignal;
  }): Promise<void> {
    const signal = options.signal ? { signal: options.signal } : {};
    const content = { apiVersion: API_VERSION, metadata: { name: options.contentName } };
    // Retain first, so neither deletion can take the storage snapshot with it.
    if (await this.readVolumeSnapshotContent({ name: options.contentName, ...signal })) {
      await this.retainContent({ name: options.contentName, ...signal });
      await this.cluster.delete({ resource: 'volumesnapshotcontents', object: content, ...signal });
    }
    await this.cluster.delete({
      resource: 'volumesnapshots',
      object: { apiVersion: API_VERSION, metadata: { namespace: options.namespace, name: options.name } },
      ...signal,
    });
  }

  async retainContent(options: { name: string; signal?: AbortSignal }): Promise<void> {
    await this.cluster.mergePatch({
      resource: 'volumesnapshotcontents',
      object: { apiVersion: API_VERSION, metadata: { name: options.name } },
      patch: { spec: { deletionPolicy: 'Retain' } },
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
}
