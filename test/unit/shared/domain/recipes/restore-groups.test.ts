import { describe, expect, it } from 'vitest';
import { factsOf } from '../../../../../shared/domain/backup/item-blocks.js';
import type { ItemRef } from '../../../../../shared/domain/kubernetes/item-ref.js';
import type { RecipeGroupFilter } from '../../../../../shared/domain/recipes/groups.js';
import {
  assignRestoreSteps,
  type RestoreGroupItem,
  type RestoreStepGroup,
} from '../../../../../shared/domain/recipes/restore-groups.js';

const ref = (resource: string, namespace: string, name: string, group = ''): ItemRef => ({
  group,
  version: 'v1',
  resource,
  namespace,
  name,
});
const item = (r: ItemRef, object: Record<string, unknown> = {}): RestoreGroupItem => ({
  ref: r,
  labels: ((object.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<
    string,
    string
  >,
  facts: factsOf(r, object),
});

// Seed 002's groups: the marked volumes and everything else at backup; at restore, the resources
// a workload needs, then the workloads.
const volumes: RecipeGroupFilter = {
  name: 'volumes',
  includedResourceTypes: ['persistentvolumeclaims', 'persistentvolumes'],
  labelSelector: { matchExpressions: [{ key: 'backup/volume', operator: 'Exists' }] },
};
const resources: RecipeGroupFilter = {
  name: 'resources',
  excludedResourceTypes: ['persistentvolumeclaims', 'persistentvolumes'],
};
const preWorkload: RecipeGroupFilter = {
  name: 'pre-workload',
  excludedResourceTypes: ['deployments.apps', 'pods'],
};
const workloads: RecipeGroupFilter = { name: 'workloads', includedResourceTypes: ['deployments.apps'] };
const groups = [volumes, resources, preWorkload, workloads];
const groupNamed = (name: string) => groups.find((g) => g.name === name);
const steps: RestoreStepGroup[] = [
  { step: 0, filter: volumes, source: 'volumes' },
  { step: 1, filter: preWorkload, source: 'resources' },
  { step: 3, filter: workloads, source: 'resources' },
];

const claim = item(ref('persistentvolumeclaims', 'app', 'data'), {
  metadata: { labels: { 'backup/volume': 'yes' } },
  spec: { volumeName: 'pv-1' },
});
const volume = item(ref('persistentvolumes', '', 'pv-1'));
const pod = item(ref('pods', 'app', 'db'), {
  spec: { volumes: [{ persistentVolumeClaim: { claimName: 'data' } }] },
});
const settings = item(ref('configmaps', 'app', 'settings'));
const web = item(ref('deployments', 'app', 'web', 'apps'));
const otherClaim = item(ref('persistentvolumeclaims', 'app', 'scratch'));

describe('assignRestoreSteps', () => {
  it('restores each item in the step whose group restores from the backup group that took it', () => {
    // Act
    const assigned = assignRestoreSteps({
      items: [pod, claim, volume, settings, web, otherClaim],
      backupGroups: [volumes, resources],
      steps,
      groupNamed,
    });

    // Assess
    expect(assigned).toEqual([
      // The pod went to the resources group at backup; no restore step of it takes pods.
      undefined,
      // The marked claim, and its volume with it though unmarked, as at backup.
      0,
      0,
      1,
      3,
      // An unmarked claim no backup group took: nothing restores it.
      undefined,
    ]);
  });

  it('gives a restore group only its backup group’s items, whatever its own filters admit', () => {
    // Prepare: a restore group of volumes that names the resources group (which took none).
    const wrongSource: RestoreStepGroup[] = [{ step: 0, filter: volumes, source: 'resources' }];

    // Act
    const assigned = assignRestoreSteps({
      items: [claim, volume, settings],
      backupGroups: [volumes, resources],
      steps: wrongSource,
      groupNamed,
    });

    // Assess
    expect(assigned).toEqual([undefined, undefined, undefined]);
  });

  it('restores an item once, in the first step that takes it', () => {
    // Act
    const assigned = assignRestoreSteps({
      items: [settings, web],
      backupGroups: [volumes, resources],
      steps: [
        { step: 0, filter: resources, source: 'resources' },
        { step: 1, filter: workloads, source: 'resources' },
      ],
      groupNamed,
    });

    // Assess
    expect(assigned).toEqual([0, 0]);
  });

  it('takes the restore steps’ sources, in order, as the backup’s groups when the recipe has no backup workflow', () => {
    // Act
    const assigned = assignRestoreSteps({
      items: [claim, volume, settings, web],
      backupGroups: [],
      steps,
      groupNamed,
    });

    // Assess
    expect(assigned).toEqual([0, 0, 1, 3]);
  });
});
