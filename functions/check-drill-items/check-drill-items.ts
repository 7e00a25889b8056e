/**
 * CheckDrillItems: once the drill's restore has ended, checks every item of the backup's resource
 * list in the target cluster, under the namespace mappings: present, and for Secrets, ConfigMaps
 * and custom resources equal in data to the backup's copy (read from the backup's archive, only
 * for those items). Writes what it found to the drill's working data and returns counts: the
 * state payload never carries items. A Secret's data is compared, never kept, logged or reported.
 */
import pLimit from 'p-limit';
import { readBackupArchive } from '../../shared/adapters/backup-archive-reader.js';
import type { DrillRun } from '../../shared/contracts/drill.js';
import { type ExpectedItem, expectedItems, itemLabel } from '../../shared/domain/drills/expected-items.js';
import { dataDifferences } from '../../shared/domain/drills/item-check.js';
import type { DrillMismatch } from '../../shared/domain/drills/report.js';
import { backupKeys, drillKeys } from '../../shared/domain/storage/keys.js';
import type { Cluster, ClusterWriter } from '../../shared/ports/cluster.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { type DrillItemFindings, resourceOf, resourcesOf, stub } from '../common/drill-items.js';
import { drilledResourceList } from '../common/drill-records.js';

export interface CheckDrillItemsDeps {
  readonly store: ObjectStore;
  readonly clusterNamed: (name: string) => Promise<Cluster & ClusterWriter>;
  readonly signal?: AbortSignal;
}

export interface DrillItemCounts {
  readonly checked: number;
  readonly notChecked: number;
  readonly waitedOn: number;
  readonly mismatches: number;
}

/** Reads in flight at once against the target's apiserver. */
const READS = 16;

const groupOf = (apiVersion: string): string =>
  apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
const archiveKey = (o: { group: string; kind: string; namespace: string; name: string }): string =>
  `${o.group}/${o.kind} ${o.namespace}/${o.name}`;

/** The backup's copies of the items compared in data, by group, kind, source namespace and name. */
async function backedUpCopies(options: {
  store: ObjectStore;
  backupName: string;
  items: readonly ExpectedItem[];
}): Promise<Map<string, Record<string, unknown>>> {
  const wanted = new Set(
    options.items
      .filter((i) => i.check === 'data')
      .map((i) =>
        archiveKey({
          group: groupOf(i.apiVersion),
          kind: i.kind,
          namespace: i.sourceNamespace,
          name: i.name,
        }),
      ),
  );
  const copies = new Map<string, Record<string, unknown>>();
  if (wanted.size === 0) return copies;
  const body = await options.store.getStream(backupKeys(options.backupName).contents);
  if (!body) return copies;
  await readBackupArchive({
    body,
    onItem: async (entry) => {
      if (entry.version) return;
      const apiVersion = String(entry.object.apiVersion ?? '');
      const key = archiveKey({
        group: groupOf(apiVersion),
        kind: String(entry.object.kind ?? ''),
        namespace: entry.namespace,
        name: entry.name,
      });
      if (wanted.has(key)) copies.set(key, entry.object);
    },
  });
  return copies;
}

export async function checkDrillItems(
  input: { run: DrillRun },
  deps: CheckDrillItemsDeps,
): Promise<DrillItemCounts> {
  const { run } = input;
  const signal = deps.signal ? { signal: deps.signal } : {};
  const resourceList = await drilledResourceList(deps.store, run, deps.signal);
  const mismatches: DrillMismatch[] = [];
  if (!resourceList)
    mismatches.push({
      item: `backup ${run.backupName}`,
      problem: 'unreadable',
      detail: 'it has no resource list',
    });
  const items = expectedItems({ resourceList: resourceList ?? {}, namespaceMapping: run.namespaceMapping });
  const cluster = await deps.clusterNamed(run.cluster);
  const resources = resourcesOf((await cluster.discover(signal)).resources);
  const copies = await backedUpCopies({ store: deps.store, backupName: run.backupName, items });
  const checked = items.filter((i) => i.check !== 'none');
  const limit = pLimit(READS);
  const found = await Promise.all(
    checked.map((item) => limit(() => checkItem({ item, cluster, resources, copies, ...signal }))),
  );
  for (const mismatch of found) if (mismatch) mismatches.push(mismatch);
  const missing = new Set(found.filter((m) => m?.problem === 'missing').map((m) => m?.item));
  const waitOn = checked.filter((i) => i.readiness && !missing.has(itemLabel(i)));
  const findings: DrillItemFindings = {
    checked: checked.length,
    notChecked: items.length - checked.length,
    mismatches,
    waitOn: waitOn.map((i) => ({
      apiVersion: i.apiVersion,
      kind: i.kind,
      namespace: i.namespace,
      name: i.name,
      readiness: i.readiness ?? 'available',
      resource: resourceOf(resources, i) ?? '',
    })),
  };
  await deps.store.put(drillKeys(run).items, JSON.stringify(findings), { contentType: 'application/json' });
  return {
    checked: findings.checked,
    notChecked: findings.notChecked,
    waitedOn: waitOn.length,
    mismatches: mismatches.length,
  };
}

/** One item: a mismatch, or undefined when it is as the backup has it. */
async function checkItem(options: {
  item: ExpectedItem;
  cluster: ClusterWriter;
  resources: ReadonlyMap<string, string>;
  copies: ReadonlyMap<string, Record<string, unknown>>;
  signal?: AbortSignal;
}): Promise<DrillMismatch | undefined> {
  const { item } = options;
  const label = itemLabel(item);
  const resource = resourceOf(options.resources, item);
  if (!resource) return { item: label, problem: 'missing', detail: 'the target cluster serves no such kind' };
  const live = await options.cluster.read({
    resource,
    object: stub(item),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!live) return { item: label, problem: 'missing', detail: 'not in the target cluster' };
  if (item.check !== 'data') return undefined;
  const group = groupOf(item.apiVersion);
  const copy = options.copies.get(
    archiveKey({ group, kind: item.kind, namespace: item.sourceNamespace, name: item.name }),
  );
  if (!copy) return { item: label, problem: 'unreadable', detail: "listed, but not in the backup's archive" };
  const differences = dataDifferences({ item, backedUp: copy, live });
  return differences.length > 0
    ? { item: label, problem: 'different', detail: `differs in ${differences.join(', ')}` }
    : undefined;
}
