/**
 * Objects the cluster itself adds to every new namespace: the `default` ServiceAccount
 * (service-account controller) and the `kube-root-ca.crt` ConfigMap (root-CA publisher). A
 * restore into a namespace it has just created meets them as existing objects once the
 * controllers have caught up; the plan and the restore must agree on that. Pure.
 */
export function addedWithNamespace(groupResource: string, name: string | undefined): boolean {
  return (
    (groupResource === 'serviceaccounts' && name === 'default') ||
    (groupResource === 'configmaps' && name === 'kube-root-ca.crt')
  );
}
