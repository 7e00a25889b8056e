/**
 * Where a Kubernetes object lives in the API (its collection's path, its name) and what a
 * Status answer says, for the cluster adapter's requests. Pure: builds strings, sends nothing.
 */

/** The message of a Kubernetes Status body, or its first characters. */
export function messageOf(body: string): string {
  try {
    const status = JSON.parse(body) as { message?: unknown };
    if (typeof status.message === 'string') return status.message;
  } catch {
    // not JSON
  }
  return body.slice(0, 300);
}

/** The collection path of an object: `/apis/apps/v1/namespaces/shop/deployments`. */
export function collectionPath(resource: string, object: Record<string, unknown>): string {
  const apiVersion = String(object.apiVersion ?? 'v1');
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const namespace = (object.metadata as { namespace?: unknown } | undefined)?.namespace;
  const scope =
    typeof namespace === 'string' && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${scope}/${resource}`;
}

export function objectName(object: Record<string, unknown>): string {
  return String((object.metadata as { name?: unknown } | undefined)?.name ?? '');
}
