/**
 * The API's contract: every route's answers, 2xx and errors, validated against docs/api.yaml by
 * openapi-backend (itself validating the document against the OpenAPI 3.0 schema), through the
 * handler API Gateway invokes, against the real local cluster and a directory store, the
 * workflows run by the local server's orchestrator. The router and the document name the same
 * routes; a 400 names the field paths at fault; a retried create answers the run it started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import formats from 'ajv-formats';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterReacher } from '../../../cli/server/clusters.js';
import { LocalExecutions } from '../../../cli/server/local-executions.js';
import { LocalDownloadLinks } from '../../../cli/server/local-links.js';
import { localRunners } from '../../../cli/server/runners.js';
import { handleApiRequest, ROUTES } from '../../../functions/api/api.js';
import type { ApiDeps } from '../../../functions/api/deps.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import type { ScheduleTimer, TimerExpression } from '../../../shared/ports/scheduler.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { waitFor } from '../support/wait.js';

const DOCUMENT = join(import.meta.dirname, '..', '..', '..', 'docs', 'api.yaml');

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

describe('the API, against docs/api.yaml', () => {
  let api: OpenAPIBackend;
  let deps: ApiDeps & { executions: LocalExecutions };
  let root: string;
  let namespace: string;
  /** Every (operation, status) answered and valid. */
  const seen = new Set<string>();
  /** The schedule timer's state, as EventBridge Scheduler would hold it (our own port, faked). */
  const timers = new Map<string, { expressions: readonly TimerExpression[]; enabled: boolean }>();
  const timer: ScheduleTimer = {
    put: async ({ name, expressions, enabled }) => void timers.set(name, { expressions, enabled }),
    remove: async ({ name }) => void timers.delete(name),
  };

  beforeAll(async () => {
    api = new OpenAPIBackend({
      definition: DOCUMENT,
      strict: true,
      validate: true,
      // CommonJS under ESM: the plugin is the module's default export.
      customizeAjv: (ajv) => (formats as unknown as { default: (a: typeof ajv) => typeof ajv }).default(ajv),
    });
    await api.init();
    root = await mkdtemp(join(tmpdir(), 'lifeboat-contract-'));
    const store = new LocalDirectoryStore(join(root, 'store'));
    const source = testEnv().clusters.source.kubeconfig;
    const served = new Map([['source', { path: source }]]);
    const executions = new LocalExecutions(
      await localRunners({
        store,
        clusterNamed: clusterReacher(served),
        values: { 'repository-key-file': join(root, 'repository.key') },
      }),
    );
    deps = {
      store,
      executions,
      links: new LocalDownloadLinks(() => 'http://127.0.0.1:9'),
      clusters: ['source'],
      timer,
    };
    namespace = uniqueName('contract');
    const core = kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'one', labels: { app: 'a' } } },
    });
  });

  afterAll(async () => {
    await deps?.executions.settled();
    await kubeConfigFor(testEnv().clusters.source)
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  /** One request through the handler, its answer validated against the document. */
  async function call(
    method: string,
    path: string,
    options: { query?: Record<string, string>; body?: unknown; raw?: string; deps?: ApiDeps } = {},
  ): Promise<Answer> {
    const body = options.raw ?? (options.body === undefined ? null : JSON.stringify(options.body));
    const result = await handleApiRequest(
      {
        httpMethod: method,
        path,
        queryStringParameters: options.query ?? null,
        body,
        isBase64Encoded: false,
      },
      options.deps ?? deps,
    );
    const operation = api.matchOperation({ method, path, query: options.query ?? {}, headers: {} }) as
      | Operation
      | undefined;
    const parsed = JSON.parse(result.body) as Record<string, unknown>;
    if (operation) {
      const validation = api.validateResponse(parsed, operation, result.statusCode);
      expect(validation.errors ?? [], `${method} ${path} ${result.statusCode}: ${result.body}`).toEqual([]);
      seen.add(`${operation.operationId} ${result.statusCode}`);
    }
    return { status: result.statusCode, body: parsed };
  }

  const backupBody = (name: string, spec: Record<string, unknown> = {}) => ({
    cluster: 'source',
    backup: {
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { name },
      spec: { includedNamespaces: [namespace], ...spec },
    },
  });

  it('names the same routes and methods as the router', () => {
    const documented = api
      .getOperations()
      .map((o) => `${o.method.toUpperCase()} ${o.path}`)
      .sort();
    const routed = Object.entries(ROUTES)
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`))
      .sort();
    expect(routed).toEqual(documented);
  });

  it('refuses bad requests with 400, each problem by its field path', async () => {
    const invalid = await call('POST', '/backups', {
      body: {
        cluster: 'nowhere',
        backup: { metadata: { name: 'Bad_Name' }, spec: { ttl: 'soon', bogus: 1 } },
      },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('FailedValidation');
    const paths = (invalid.body.problems as { path: string }[]).map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining(['backup.metadata.name', 'backup.spec.ttl', 'backup.spec']));
    const cluster = await call('POST', '/backups', { body: backupBody('ok-name') });
    expect(cluster.status).toBe(202);
    const elsewhere = await call('POST', '/restores', {
      body: { cluster: 'nowhere', restore: { metadata: { name: 'r' }, spec: { backupName: 'ok-name' } } },
    });
    expect(elsewhere).toMatchObject({ status: 400, body: { problems: [{ path: 'cluster' }] } });
    expect((await call('POST', '/backups', { raw: '{not json' })).body).toMatchObject({
      problems: [{ path: '(body)', message: 'is not JSON' }],
    });
    expect(
      (await call('GET', '/backups', { query: { limit: '0', labelSelector: 'a in (' } })).body,
    ).toMatchObject({
      problems: [{ path: 'limit' }],
    });
    expect((await call('GET', '/backups', { query: { labelSelector: '!!' } })).body).toMatchObject({
      problems: [{ path: 'labelSelector' }],
    });
    expect((await call('GET', '/restores', { query: { continue: 'garbage' } })).status).toBe(400);
    expect((await call('GET', '/backups/Not_A_Name')).body).toMatchObject({ problems: [{ path: 'name' }] });
    await deps.executions.settled();
  });

  it('answers every route of a backup, a restore and a deletion as the document says', async () => {
    const name = uniqueName('contract-b');
    const first = await call('POST', '/backups', { body: backupBody(name) });
    expect(first.status).toBe(202);
    // The same request again answers the same run; another body for the name is a 409.
    expect((await call('POST', '/backups', { body: backupBody(name) })).status).toBe(202);
    expect((await call('POST', '/backups', { body: backupBody(name, { ttl: '1h' }) })).status).toBe(409);
    const done = await waitFor(
      'the backup to end',
      async () => {
        const got = await call('GET', `/backups/${name}`);
        const phase = (got.body.status as { phase?: string } | undefined)?.phase;
        return phase === 'Completed' ? got : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(done.body.metadata).toMatchObject({ annotations: { 'lifeboat.io/cluster': 'source' } });
    const listed = await call('GET', '/backups', {
      query: { cluster: 'source', phase: 'Completed', limit: '1' },
    });
    expect(listed.body.items).toHaveLength(1);
    const next = await call('GET', '/backups', {
      query: { continue: String((listed.body.metadata as { continue: string }).continue) },
    });
    expect(next.status).toBe(200);
    expect((await call('GET', '/backups', { query: { labelSelector: 'nobody=here' } })).body.items).toEqual(
      [],
    );
    expect((await call('GET', `/backups/${name}/describe`)).body).toHaveProperty('resourceList');
    expect((await call('GET', `/backups/${name}/logs`)).body.url).toMatch(
      /^http:\/\/127\.0\.0\.1:9\/downloads\//,
    );
    expect((await call('GET', `/backups/${name}/download`)).status).toBe(200);
    expect((await call('GET', `/backups/${name}/deletion`)).status).toBe(404);
    for (const path of [
      `/backups/gone`,
      `/backups/gone/describe`,
      `/backups/gone/logs`,
      `/backups/gone/download`,
    ])
      expect((await call('GET', path)).status).toBe(404);
    expect((await call('GET', '/clusters')).body).toEqual({ items: [{ name: 'source' }] });

    const restore = uniqueName('contract-r');
    const restoreBody = {
      cluster: 'source',
      restore: {
        metadata: { name: restore },
        spec: { backupName: name, includedResources: ['configmaps'], existingResourcePolicy: 'update' },
      },
    };
    expect((await call('POST', '/restores', { body: restoreBody })).status).toBe(202);
    expect(
      (
        await call('POST', '/restores', {
          body: { ...restoreBody, restore: { ...restoreBody.restore, spec: { backupName: 'other' } } },
        })
      ).status,
    ).toBe(409);
    await waitFor(
      'the restore to end',
      async () => {
        const phase = ((await call('GET', `/restores/${restore}`)).body.status as { phase?: string }).phase;
        return phase === 'Completed' || phase === 'PartiallyFailed' ? true : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect((await call('GET', '/restores')).body.items).not.toEqual([]);
    expect((await call('GET', `/restores/${restore}/describe`)).body).toHaveProperty('results');
    expect((await call('GET', `/restores/${restore}/logs`)).status).toBe(200);
    expect((await call('DELETE', `/restores/${restore}`)).status).toBe(200);
    for (const path of [`/restores/${restore}`, `/restores/${restore}/describe`, `/restores/${restore}/logs`])
      expect((await call('GET', path)).status).toBe(404);
    expect((await call('DELETE', `/restores/${restore}`)).status).toBe(404);

    const drill = uniqueName('contract-d');
    const drillBody = {
      cluster: 'source',
      drill: {
        metadata: { name: drill },
        spec: { backupName: name, namespaceMapping: { [namespace]: `${namespace}-d` }, readyTimeout: '2m' },
      },
    };
    const badDrill = await call('POST', '/drills', {
      body: { cluster: 'nowhere', drill: { metadata: { name: drill }, spec: { readyTimeout: 'soon' } } },
    });
    expect(badDrill.status).toBe(400);
    expect(JSON.stringify(badDrill.body)).toContain('drill.spec.readyTimeout');
    expect((await call('POST', '/drills', { body: drillBody })).status).toBe(202);
    expect((await call('POST', '/drills', { body: drillBody })).status).toBe(202);
    const otherDrill = { ...drillBody, drill: { ...drillBody.drill, spec: { backupName: 'other' } } };
    expect((await call('POST', '/drills', { body: otherDrill })).status).toBe(409);
    const drilled = await waitFor(
      'the drill to end',
      async () => {
        const got = await call('GET', `/drills/${drill}`);
        return got.body.phase === 'Completed' || got.body.phase === 'Failed' ? got : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(drilled.body).toMatchObject({ phase: 'Completed', mismatches: [], backup: { name } });
    expect((await call('GET', '/drills')).body.items).toEqual([expect.objectContaining({ name: drill })]);
    expect((await call('GET', '/drills/gone')).status).toBe(404);
    await kubeConfigFor(testEnv().clusters.source)
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: `${namespace}-d` })
      .catch(() => undefined);

    const deletion = await call('DELETE', `/backups/${name}`);
    expect(deletion).toMatchObject({
      status: 202,
      body: { status: { phase: 'New' }, metadata: { generation: 1 } },
    });
    const processed = await waitFor(
      'the deletion to be processed',
      async () => {
        const got = await call('GET', `/backups/${name}/deletion`);
        return (got.body.status as { phase: string }).phase === 'Processed' ? got : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(processed.body.status).toMatchObject({ deleted: true });
    expect((await call('GET', `/backups/${name}`)).status).toBe(404);
    expect((await call('DELETE', `/backups/${name}`)).status).toBe(404);
    // Deleted, the name is free again: the same request starts a new backup.
    expect((await call('POST', '/backups', { body: backupBody(name) })).status).toBe(202);
    await waitFor(
      'the second backup to end',
      async () =>
        ((await call('GET', `/backups/${name}`)).body.status as { phase?: string }).phase === 'Completed'
          ? true
          : undefined,
      { timeoutMs: 120_000 },
    );
  });

  it('refuses to delete a backup still running, with 409', async () => {
    const name = uniqueName('contract-running');
    expect((await call('POST', '/backups', { body: backupBody(name) })).status).toBe(202);
    const refused = await call('DELETE', `/backups/${name}`);
    expect(refused).toMatchObject({ status: 409, body: { code: 'BackupInProgress' } });
    await deps.executions.settled();
  });

  const scheduleBody = (name: string, spec: Record<string, unknown> = {}) => ({
    cluster: 'source',
    schedule: {
      apiVersion: 'velero.io/v1',
      kind: 'Schedule',
      metadata: { name, annotations: { 'lifeboat.io/retention': '{"keepLast":2}' } },
      spec: { schedule: '0 3 * * *', template: { includedNamespaces: [namespace] }, ...spec },
    },
  });

  it('refuses bad schedules with 400 by field path, and 503 without a timer', async () => {
    const bad = await call('POST', '/schedules', {
      body: scheduleBody('Bad_Name', { template: { ttl: 'soon' }, bogus: 1 }),
    });
    expect(bad.status).toBe(400);
    const paths = (bad.body.problems as { path: string }[]).map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining(['schedule.metadata.name', 'schedule.spec', 'schedule.spec.template.ttl']),
    );
    const checked = await call('POST', '/schedules', {
      body: scheduleBody('checked', { schedule: '0 0 */2 * 5' }),
    });
    expect(checked.body.problems).toEqual([
      { path: 'schedule.spec.schedule', message: expect.stringContaining('day') },
    ]);
    const elsewhere = await call('POST', '/schedules', {
      body: { ...scheduleBody('elsewhere'), cluster: 'nowhere' },
    });
    expect(elsewhere).toMatchObject({ status: 400, body: { problems: [{ path: 'cluster' }] } });
    expect((await call('POST', '/schedules', { raw: '{not json' })).body).toMatchObject({
      problems: [{ path: '(body)' }],
    });
    expect((await call('GET', '/gc')).body).toMatchObject({ problems: [{ path: 'dryRun' }] });
    expect((await call('GET', '/schedules/Not_A_Name')).body).toMatchObject({ problems: [{ path: 'name' }] });
    const { timer: _, ...untimed } = deps;
    const refused = await call('POST', '/schedules', { body: scheduleBody('untimed'), deps: untimed });
    expect(refused).toMatchObject({ status: 503, body: { code: 'ServiceUnavailable' } });
    expect(timers.has('untimed') || timers.has('elsewhere')).toBe(false);
    expect((await call('GET', '/schedules/untimed')).status).toBe(404);
  });

  it('answers every schedule route and the GC dry run as the document says', async () => {
    const name = uniqueName('contract-s');
    const created = await call('POST', '/schedules', { body: scheduleBody(name) });
    expect(created).toMatchObject({
      status: 201,
      body: { cluster: 'source', metadata: { name }, status: { phase: 'Enabled' } },
    });
    expect(timers.get(name)).toEqual({
      expressions: [{ expression: 'cron(0 3 * * ? *)', timezone: 'UTC' }],
      enabled: true,
    });
    expect((await call('POST', '/schedules', { body: scheduleBody(name) })).status).toBe(201);
    const other = scheduleBody(name, { schedule: '0 4 * * *' });
    expect(await call('POST', '/schedules', { body: other })).toMatchObject({
      status: 409,
      body: { code: 'AlreadyExists' },
    });
    const listed = await call('GET', '/schedules');
    expect(listed.body.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ cluster: 'source' })]),
    );
    expect((await call('GET', `/schedules/${name}`)).body).toMatchObject({ spec: { schedule: '0 3 * * *' } });
    expect((await call('GET', '/schedules/gone')).status).toBe(404);

    expect((await call('POST', `/schedules/${name}/pause`)).body).toMatchObject({ spec: { paused: true } });
    expect(timers.get(name)?.enabled).toBe(false);
    expect((await call('POST', `/schedules/${name}/unpause`)).body).toMatchObject({
      spec: { paused: false },
    });
    expect(timers.get(name)?.enabled).toBe(true);
    for (const verb of ['pause', 'unpause', 'backups'])
      expect((await call('POST', `/schedules/gone/${verb}`)).status).toBe(404);
    const { timer: _, ...untimed } = deps;
    expect((await call('POST', `/schedules/${name}/pause`, { deps: untimed })).status).toBe(503);
    expect((await call('DELETE', `/schedules/${name}`, { deps: untimed })).status).toBe(503);
    expect((await call('POST', `/schedules/${name}/unpause`, { deps: untimed })).status).toBe(503);

    const started = await call('POST', `/schedules/${name}/backups`);
    expect(started.status).toBe(202);
    const backup = (started.body.metadata as { name: string }).name;
    expect(backup).toMatch(new RegExp(`^${name}-\\d{14}$`));
    expect(started.body.metadata).toMatchObject({ labels: { 'velero.io/schedule-name': name } });
    expect(started.body.spec).toMatchObject({ includedNamespaces: [namespace] });
    await waitFor(
      'the backup from the schedule to end',
      async () =>
        ((await call('GET', `/backups/${backup}`)).body.status as { phase?: string }).phase === 'Completed'
          ? true
          : undefined,
      { timeoutMs: 120_000 },
    );
    const report = await call('GET', '/gc', { query: { dryRun: 'true' } });
    expect(report).toMatchObject({ status: 200, body: { kind: 'GarbageCollectionReport', dryRun: true } });
    expect((report.body.deleted as { name: string }[]).map((d) => d.name)).not.toContain(backup);

    const deleted = await call('DELETE', `/schedules/${name}`);
    expect(deleted).toMatchObject({ status: 200, body: { metadata: { name } } });
    expect(timers.has(name)).toBe(false);
    expect((await call('GET', `/schedules/${name}`)).status).toBe(404);
    expect((await call('DELETE', `/schedules/${name}`)).status).toBe(404);
    expect((await call('GET', `/backups/${backup}`)).status).toBe(200);
  });

  it('answers unknown routes and methods with JSON errors', async () => {
    expect(await call('GET', '/nowhere')).toMatchObject({ status: 404, body: { code: 'NotFound' } });
    expect(await call('PUT', '/backups')).toMatchObject({ status: 405, body: { code: 'MethodNotAllowed' } });
  });

  it('has answered every operation of the document with a 2xx and an error, each valid', () => {
    for (const operation of api.getOperations()) {
      const statuses = [...seen]
        .filter((s) => s.startsWith(`${operation.operationId} `))
        .map((s) => Number(s.split(' ')[1]));
      expect(
        statuses.some((s) => s < 300),
        `${operation.operationId}: ${statuses}`,
      ).toBe(true);
      // Listing the clusters, the drills or the schedules takes no input that could be wrong.
      if (!['listClusters', 'listDrills', 'listSchedules'].includes(operation.operationId ?? ''))
        expect(
          statuses.some((s) => s >= 400),
          `${operation.operationId}: ${statuses}`,
        ).toBe(true);
    }
  });
});
