/**
 * How YAML that Kubernetes users write is read: YAML 1.1, as sigs.k8s.io/yaml (go-yaml v2) reads
 * ConfigMap documents and patch data in Velero, so `0644` is the octal 420 a manifest means and
 * `yes`/`no` stay booleans. Never used for data Lifeboat writes itself.
 */
export const YAML_1_1 = { version: '1.1' } as const;
