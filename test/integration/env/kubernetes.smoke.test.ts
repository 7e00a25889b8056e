import { Writable } from 'node:stream';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  Exec,
  type V1Status,
  VersionApi,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { kubeConfigFor, testEnv, uniqueName, useDrCluster } from '../support/env.js';
import { waitFor } from '../support/wait.js';

function collector(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 404;
}

describe('the local Kubernetes control plane', () => {
  const kc = () => kubeConfigFor(testEnv().clusters.source);

  it('reports Kubernetes v1.34 from GET /version', async () => {
    const version = await kc().makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\.34\.\d+$/);
    expect(version.major).toBe('1');
    expect(version.minor).toBe('34');
  });

  it('runs a Deployment whose pods KWOK brings to Running', async () => {
    const core = kc().makeApiClient(CoreV1Api);
    const apps = kc().makeApiClient(AppsV1Api);
    const namespace = uniqueName('smoke-deploy');
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
          },
        },
      },
    });
    const running = await waitFor('two Running pods', async () => {
      const pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=web' });
      const up = pods.items.filter((p) => p.status?.phase === 'Running');
      return up.length === 2 ? up : undefined;
    });
    expect(running.map((p) => p.spec?.nodeName)).toEqual([
      testEnv().clusters.source.nodeName,
      testEnv().clusters.source.nodeName,
    ]);
    await core.deleteNamespace({ name: namespace });
  });

  it('serves a CRD and its custom resources once the CRD is established', async () => {
    const ext = kc().makeApiClient(ApiextensionsV1Api);
    const custom = kc().makeApiClient(CustomObjectsApi);
    const core = kc().makeApiClient(CoreV1Api);
    const group = `${uniqueName('smoke')}.lifeboat.test`;
    const namespace = uniqueName('smoke-crd');
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wdg'] },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
                },
              },
            },
          ],
        },
      },
    });
    await waitFor('the CRD to be Established', async () => {
      const crd = await ext.readCustomResourceDefinition({ name: `widgets.${group}` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
    await custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace,
      plural: 'widgets',
      body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 3 } },
    });
    const read = (await custom.getNamespacedCustomObject({
      group,
      version: 'v1',
      namespace,
      plural: 'widgets',
      name: 'w1',
    })) as { spec: { size: number } };
    expect(read.spec.size).toBe(3);
    await core.deleteNamespace({ name: namespace });
    await ext.deleteCustomResourceDefinition({ name: `widgets.${group}` });
  });

  it('pages a LIST with limit and continue, covering every object exactly once', async () => {
    const core = kc().makeApiClient(CoreV1Api);
    const namespace = uniqueName('smoke-page');
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const created = Array.from({ length: 7 }, (_, i) => `cm-${i}`);
    await Promise.all(
      created.map((name) =>
        core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { i: name } } }),
      ),
    );
    // The controller-manager publishes kube-root-ca.crt into every namespace; wait for it so the
    // namespace's content is settled before paging.
    await waitFor('the root CA config map', async () =>
      (await core.listNamespacedConfigMap({ namespace })).items.some(
        (c) => c.metadata?.name === 'kube-root-ca.crt',
      ),
    );
    const all = (await core.listNamespacedConfigMap({ namespace })).items.map((c) => c.metadata?.name);
    const pages: string[][] = [];
    let token: string | undefined;
    do {
      const page = await core.listNamespacedConfigMap({ namespace, limit: 3, _continue: token });
      pages.push(page.items.map((c) => c.metadata?.name ?? ''));
      token = page.metadata?._continue || undefined;
    } while (token);
    expect(pages.length).toBe(Math.ceil(all.length / 3));
    expect(pages.every((p) => p.length <= 3)).toBe(true);
    expect(pages.flat().sort()).toEqual([...all].sort());
    expect(pages.flat()).toEqual(expect.arrayContaining(created));
    await core.deleteNamespace({ name: namespace });
  });

  it('finalizes a deleted namespace through the controller-manager', async () => {
    const core = kc().makeApiClient(CoreV1Api);
    const namespace = uniqueName('smoke-delete');
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'keep-me-busy' } } });
    await core.deleteNamespace({ name: namespace });
    const phase = (await core.readNamespace({ name: namespace })).status?.phase;
    expect(phase).toBe('Terminating');
    await waitFor(
      'the namespace to be gone',
      async () => {
        try {
          await core.readNamespace({ name: namespace });
          return false;
        } catch (error) {
          if (isNotFound(error)) return true;
          throw error;
        }
      },
      { timeoutMs: 90_000 },
    );
  });

  it('executes a command in a pod through the apiserver exec subresource', async () => {
    const config = kc();
    const core = config.makeApiClient(CoreV1Api);
    const namespace = uniqueName('smoke-exec');
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor('the default service account', async () =>
      (await core.listNamespacedServiceAccount({ namespace })).items.some(
        (s) => s.metadata?.name === 'default',
      ),
    );
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'shell' },
        spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', 'infinity'] }] },
      },
    });
    await waitFor(
      'the pod to run',
      async () => (await core.readNamespacedPod({ namespace, name: 'shell' })).status?.phase === 'Running',
    );

    const stdout = collector();
    const stderr = collector();
    const status = await new Promise<V1Status>((resolve, reject) => {
      new Exec(config)
        .exec(
          namespace,
          'shell',
          'main',
          ['sh', '-c', 'echo hello; echo oops >&2; exit 3'],
          stdout.stream,
          stderr.stream,
          null,
          false,
          resolve,
        )
        .catch(reject);
    });

    expect(stdout.text()).toBe('hello\n');
    expect(stderr.text()).toBe('oops\n');
    expect(status.status).toBe('Failure');
    expect(status.reason).toBe('NonZeroExitCode');
    expect(status.details?.causes).toContainEqual({ reason: 'ExitCode', message: '3' });
    await core.deleteNamespace({ name: namespace });
  });
});

describe('the second (DR) cluster', () => {
  const dr = useDrCluster();

  it('is independent of the source cluster', async () => {
    const source = kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);
    const target = kubeConfigFor(dr()).makeApiClient(CoreV1Api);
    const namespace = uniqueName('only-in-dr');
    await target.createNamespace({ body: { metadata: { name: namespace } } });
    expect((await target.readNamespace({ name: namespace })).metadata?.name).toBe(namespace);
    await expect(source.readNamespace({ name: namespace })).rejects.toSatisfy(isNotFound);
    expect(dr().server).not.toBe(testEnv().clusters.source.server);
    await target.deleteNamespace({ name: namespace });
  });
});
