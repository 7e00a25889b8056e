/**
 * What the apiserver holds, read independently of Lifeboat's collection code: every listable
 * namespaced resource in the given namespaces, as `<group-resource>/<namespace>/<name>`.
 */
import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

async function get(kc: KubeConfig, path: string): Promise<unknown> {
  const server = kc.getCurrentCluster()?.server ?? '';
  const options: import('node:https').RequestOptions = { method: 'GET' };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, server), options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode}`));
        else resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

interface ApiResourceList {
  resources: { name: string; namespaced: boolean; verbs: string[] }[];
}

export async function inventory(kc: KubeConfig, namespaces: readonly string[]): Promise<Set<string>> {
  const groups = (await get(kc, '/apis')) as {
    groups: { name: string; preferredVersion: { groupVersion: string } }[];
  };
  const versions: { group: string; path: string }[] = [
    { group: '', path: '/api/v1' },
    ...groups.groups.map((g) => ({ group: g.name, path: `/apis/${g.preferredVersion.groupVersion}` })),
  ];
  const out = new Set<string>();
  for (const v of versions) {
    // Other tests create and delete CRDs meanwhile: a group gone since /apis is skipped.
    const list = (await get(kc, v.path).catch(() => ({ resources: [] }))) as ApiResourceList;
    for (const r of list.resources) {
      if (!r.namespaced || r.name.includes('/') || !r.verbs.includes('list')) continue;
      // Served twice (core and events.k8s.io); Velero backs up the core one.
      if (v.group === 'events.k8s.io') continue;
      const gr = v.group ? `${r.name}.${v.group}` : r.name;
      for (const ns of namespaces) {
        const items = (await get(kc, `${v.path}/namespaces/${ns}/${r.name}`)) as {
          items: { metadata: { name: string } }[];
        };
        for (const item of items.items) out.add(`${gr}/${ns}/${item.metadata.name}`);
      }
    }
  }
  return out;
}
