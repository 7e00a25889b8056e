/**
 * Every object key Lifeboat reads or writes, relative to the storage location's prefix.
 * `backups/` and `restores/` follow Velero's layout exactly; Lifeboat's own data lives under
 * `plugins/lifeboat/` (Velero rejects any other top-level folder). The only module that
 * spells a key.
 */

const LIFEBOAT = 'plugins/lifeboat';

/** Where the claims on backup and restore names live, one `<name>.json` each. */
export const BACKUP_CLAIMS_DIR = `${LIFEBOAT}/claims/backups/`;
export const RESTORE_CLAIMS_DIR = `${LIFEBOAT}/claims/restores/`;

export const backupKeys = (name: string) => {
  const dir = `backups/${name}/`;
  return {
    dir,
    metadata: `${dir}velero-backup.json`,
    contents: `${dir}${name}.tar.gz`,
    logs: `${dir}${name}-logs.gz`,
    results: `${dir}${name}-results.gz`,
    resourceList: `${dir}${name}-resource-list.json.gz`,
    itemOperations: `${dir}${name}-itemoperations.json.gz`,
    volumeInfo: `${dir}${name}-volumeinfo.json.gz`,
    volumeSnapshots: `${dir}${name}-volumesnapshots.json.gz`,
    podVolumeBackups: `${dir}${name}-podvolumebackups.json.gz`,
    csiVolumeSnapshotClasses: `${dir}${name}-csi-volumesnapshotclasses.json.gz`,
    /** Held from validation on, so two runs can never write the same backup. Never expires. */
    claim: `${BACKUP_CLAIMS_DIR}${name}.json`,
    /**
     * Written when a deletion starts, removed with the claim: a deletion stopped after
     * `velero-backup.json` went can be run again (the claim alone means a backup still running).
     */
    deletion: `${LIFEBOAT}/deletions/backups/${name}.json`,
    /** Velero's DeleteBackupRequest of the backup's latest deletion (the API's), kept once processed. */
    deleteRequest: `${LIFEBOAT}/delete-requests/backups/${name}.json`,
  };
};

/**
 * Working data of one backup execution: expires by the bucket's lifecycle rule on
 * `plugins/lifeboat/work/`, and is never part of the backup.
 */
export const backupWorkKeys = (options: { name: string; runId: string }) => {
  const dir = `${LIFEBOAT}/work/backups/${options.name}/${options.runId}/`;
  return {
    dir,
    request: `${dir}request.json`,
    collected: `${dir}collected.json`,
    blocksDir: `${dir}blocks/`,
    blockItems: (blockId: string) => `${dir}blocks/${blockId}.items.json`,
    messageResult: (messageId: string) => `${dir}results/${messageId}.json.gz`,
    resultsDir: `${dir}results/`,
    fragment: (messageId: string) => `${dir}fragments/${messageId}.tar.gz`,
    collectLog: `${dir}collect.log.json.gz`,
    progress: `${dir}progress.json`,
    /** An ItemBlock whose hooks may outlast a worker, left for a long hook run (the hook runner). */
    deferredBlock: (messageId: string, blockId: string) => `${dir}deferred/${messageId}/${blockId}.json`,
    deferredDir: `${dir}deferred/`,
    /** The recipe a backup follows, as decoded (inline or from its ConfigMap): CollectRecipeItems. */
    recipe: `${dir}recipe.json`,
    /** The ItemBlock messages of one recipe group step, ten a key, kept until the step sends them. */
    stepMessages: (step: number, batch: number) =>
      `${dir}recipe-steps/${String(step).padStart(3, '0')}/${String(batch).padStart(7, '0')}.json`,
    stepMessagesDir: (step: number) => `${dir}recipe-steps/${String(step).padStart(3, '0')}/`,
    /** A deferred block's result: beside the messages' results, never counted as a message. */
    deferredResult: (messageId: string, blockId: string) =>
      `${dir}results/${messageId}${DEFERRED_RESULT_INFIX}${blockId}.json.gz`,
    /** Resource policy and volume fields ValidateBackup resolved for the workers. */
    volumeSettings: `${dir}volume-settings.json`,
    /** The volumes of one ItemBlock: facts, decisions and the snapshots started (workers). */
    blockVolumes: (blockId: string) => `${dir}volumes/${blockId}.json`,
    volumesDir: `${dir}volumes/`,
    /** Where each volume operation stands (VolumeOperations, rewritten on every poll). */
    volumeOperations: `${dir}volume-operations.json`,
  };
};

export const restoreKeys = (name: string) => {
  const dir = `restores/${name}/`;
  return {
    dir,
    logs: `${dir}restore-${name}-logs.gz`,
    results: `${dir}restore-${name}-results.gz`,
    resourceList: `${dir}restore-${name}-resource-list.json.gz`,
    itemOperations: `${dir}restore-${name}-itemoperations.json.gz`,
    /** Velero spells this one without the `restore-` prefix. */
    volumeInfo: `${dir}${name}-volumeinfo.json.gz`,
    /** Lifeboat's record of the restore (Velero keeps it as a cluster object). */
    status: `${LIFEBOAT}/restores/${name}.json`,
    claim: `${RESTORE_CLAIMS_DIR}${name}.json`,
  };
};

/**
 * How many times a backup or restore of this name was deleted: the API's executions of the name
 * carry it, so a name can be used again once deleted (functions/common/execution-names.ts).
 */
export const generationKeys = (kind: 'backups' | 'restores', name: string): string =>
  `${LIFEBOAT}/generations/${kind}/${name}.json`;

/** The events a local run publishes (`lifeboat events`), one JSON document a line. */
export const LOCAL_EVENTS_KEY = `${LIFEBOAT}/events/events.jsonl`;

export const restoreWorkKeys = (options: { name: string; runId: string }) => {
  const dir = `${LIFEBOAT}/work/restores/${options.name}/${options.runId}/`;
  return {
    dir,
    request: `${dir}request.json`,
    /** The resource modifier rules ValidateRestore resolved (inline or from a ConfigMap). */
    resourceModifiers: `${dir}resource-modifiers.json`,
    /** The volume plan PlanRestore writes for RestoreVolumes and PatchProvisionedVolumes. */
    volumes: `${dir}volumes.json`,
    volumesProgress: `${dir}volumes-progress.json`,
    provisionedProgress: `${dir}provisioned-progress.json`,
    /** The chunks of one phase (RestoreVolumes points the planned PVs at their new volumes). */
    chunksDir: (groupResource: string) => `${dir}phases/${groupResource}/`,
    chunk: (groupResource: string, chunk: number) =>
      `${dir}phases/${groupResource}/${String(chunk).padStart(5, '0')}.json`,
    outcome: (phase: number, chunk: number) =>
      `${dir}outcomes/${String(phase).padStart(3, '0')}-${String(chunk).padStart(5, '0')}.json.gz`,
    outcomesDir: `${dir}outcomes/`,
    planLog: `${dir}plan.log.json.gz`,
    /** A pod this restore created with post-restore exec hooks (RestorePhase): one key per pod. */
    podHooks: (namespace: string, name: string) => `${dir}hooks/pods/${namespace}/${name}.json`,
    podHooksDir: `${dir}hooks/pods/`,
    /** The hooks of a pod run so far (RestoreHooks saves progress after each). */
    podHooksProgress: (namespace: string, name: string) =>
      `${dir}hooks/progress/${namespace}/${name}.json.gz`,
    /** Every hook of the pod settled: what FinalizeRestore reports. */
    podHooksDone: (namespace: string, name: string) => `${dir}hooks/done/${namespace}/${name}.json.gz`,
    podHooksDoneDir: `${dir}hooks/done/`,
    /** The recipe a restore follows, as decoded (inline or from its ConfigMap): ValidateRestore. */
    recipe: `${dir}recipe.json`,
    /** The namespaces a recipe restore restores into (PlanRestore): where its hook steps look for pods. */
    recipeNamespaces: `${dir}recipe-namespaces.json`,
    /** A recipe hook step's pods and progress (RunRestoreRecipeHook), and each pod's hooks. */
    recipeHookStep: (step: number) => `${dir}recipe-hooks/${String(step).padStart(3, '0')}/step.json`,
    recipeHookPodProgress: (step: number, namespace: string, name: string) =>
      `${dir}recipe-hooks/${String(step).padStart(3, '0')}/progress/${namespace}/${name}.json.gz`,
    recipeHookPodDone: (step: number, namespace: string, name: string) =>
      `${dir}recipe-hooks/${String(step).padStart(3, '0')}/done/${namespace}/${name}.json.gz`,
    /** A recipe hook step's outcome, once settled: what FinalizeRestore reports, in step order. */
    recipeHookResult: (step: number) => `${dir}recipe-results/${String(step).padStart(3, '0')}.json.gz`,
    recipeHookResultsDir: `${dir}recipe-results/`,
  };
};

/**
 * The data mover's repository (docs/repository-format.md): one per storage location. Packs are
 * spread over 256 folders by their id's first byte; every name below the folders is an id.
 */
export const repositoryKeys = (() => {
  const dir = `${LIFEBOAT}/repository/`;
  return {
    dir,
    /** The format object: written once, read by every open. */
    format: `${dir}format.json`,
    packsDir: `${dir}packs/`,
    pack: (packId: string) => `${dir}packs/${packId.slice(0, 2)}/${packId}`,
    indexDir: `${dir}index/`,
    index: (indexId: string) => `${dir}index/${indexId}`,
    snapshotsDir: `${dir}snapshots/`,
    snapshot: (manifestId: string) => `${dir}snapshots/${manifestId}.json`,
    leasesDir: `${dir}leases/`,
    lease: (writerId: string) => `${dir}leases/${writerId}.json`,
    gcLock: `${dir}gc/lock.json`,
    condemnedDir: `${dir}gc/condemned/`,
    condemned: (recordId: string) => `${dir}gc/condemned/${recordId}.json`,
    repackedDir: `${dir}gc/repacked/`,
    repacked: (recordId: string) => `${dir}gc/repacked/${recordId}.json`,
  };
})();

/**
 * Working data of one data-mover job (docs/data-mover.md), by its id: the progress document the
 * state machine reads, block backup's checkpoint, and the marker that cancels the job. Expires
 * with `plugins/lifeboat/work/`; never part of a backup.
 */
export const dataMoverWorkKeys = (jobId: string) => {
  const dir = `${LIFEBOAT}/work/data-mover/${jobId}/`;
  return {
    dir,
    progress: `${dir}progress.json`,
    checkpoint: `${dir}checkpoint.json`,
    cancel: `${dir}cancel.json`,
  };
};

/** The id at the end of a repository key (`…/packs/ab/<id>` → `<id>`), without `.json`. */
export const repositoryKeyId = (key: string): string => (key.split('/').pop() ?? '').replace(/\.json$/, '');

/**
 * The message ids of one recipe step: `<attempt>-s<step>-<seq>`, and `<attempt>-s<step>-hook` for
 * a hook step's result. Sorted by step, so the backup's log reads in workflow order.
 */
export const recipeStepMessagePrefix = (attempt: string, step: number): string =>
  `${attempt}-s${String(step).padStart(3, '0')}-`;

/** Marks a deferred block's result key (`<messageId>.long-<blockId>`) among the messages' results. */
export const DEFERRED_RESULT_INFIX = '.long-';

export const WORK_PREFIX = `${LIFEBOAT}/work/`;

/** Velero's valid top-level folders of a backup storage location. */
export const VELERO_TOP_LEVEL = ['backups', 'restores', 'kopia', 'restic', 'metadata', 'plugins'] as const;

/**
 * The key prefix of each kind of object a storage location holds, below the location's prefix:
 * what IAM grants are scoped by (infra), so a role may write or delete only its own kind.
 */
export const STORAGE_PREFIXES = {
  /** Velero's backups: written by FinalizeBackup and RecordBackupFailure, deleted only by a deletion. */
  backups: 'backups/',
  /** Velero's restore files: written by FinalizeRestore. */
  restores: 'restores/',
  backupClaims: `${LIFEBOAT}/claims/backups/`,
  restoreClaims: `${LIFEBOAT}/claims/restores/`,
  /** Lifeboat's records of restores (restoreKeys.status). */
  restoreRecords: `${LIFEBOAT}/restores/`,
  deletions: `${LIFEBOAT}/deletions/`,
  /** Velero's DeleteBackupRequests (backupKeys.deleteRequest): the API's, the delete workflow's. */
  deleteRequests: `${LIFEBOAT}/delete-requests/`,
  /** How many times a name was deleted (generationKeys): what makes an execution name new. */
  generations: `${LIFEBOAT}/generations/`,
  backupWork: `${LIFEBOAT}/work/backups/`,
  restoreWork: `${LIFEBOAT}/work/restores/`,
  dataMoverWork: `${LIFEBOAT}/work/data-mover/`,
  repository: `${LIFEBOAT}/repository/`,
  /** DR drills' reports (drillKeys.report), their claims and their working data. */
  drillReports: `${LIFEBOAT}/drills/`,
  drillClaims: `${LIFEBOAT}/claims/drills/`,
  drillWork: `${LIFEBOAT}/work/drills/`,
} as const;

/**
 * A DR drill's report (`lifeboat dr get`), written when it starts (InProgress) and again when it
 * ends; its claim on the name; and its working data (what the item check found), expiring with
 * `plugins/lifeboat/work/`.
 */
export const DRILLS_DIR = `${LIFEBOAT}/drills/`;
export const drillKeys = (options: { name: string; runId?: string }) => {
  const work = `${LIFEBOAT}/work/drills/${options.name}/${options.runId ?? ''}/`;
  return {
    report: `${DRILLS_DIR}${options.name}.json`,
    claim: `${LIFEBOAT}/claims/drills/${options.name}.json`,
    items: `${work}items.json`,
    readiness: `${work}readiness.json`,
  };
};

/** Where the Schedules live, one `<name>.json` each (Lifeboat's; Velero keeps them as cluster objects). */
export const SCHEDULES_DIR = `${LIFEBOAT}/schedules/`;

export const scheduleKeys = (name: string) => ({
  /** The Schedule and its status (functions/schedules). */
  schedule: `${SCHEDULES_DIR}${name}.json`,
});

/** The report of the latest garbage collection run, and the dry run's (functions/collect-garbage). */
export const GARBAGE_REPORT_KEY = `${LIFEBOAT}/gc/last-report.json`;
export const GARBAGE_DRY_RUN_REPORT_KEY = `${LIFEBOAT}/gc/last-dry-run.json`;
