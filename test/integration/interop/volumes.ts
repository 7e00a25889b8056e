/**
 * Volumes across tools, for velero.test.ts (one Velero server per host): a PVC bound to a PV
 * on a moto EBS volume, backed up with a native snapshot by one tool and restored by the other
 * into a mapped namespace, where the PVC must bind to a new volume made from that snapshot.
 * Lifeboat's PV is a CSI one (ebs.csi.aws.com); Velero's an in-tree awsElasticBlockStore one,
 * which Velero snapshots natively through the AWS plugin rather than as a CSI snapshot.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { VolumeFixtures } from '../support/volumes.js';
import { waitFor } from '../support/wait.js';

export interface BoundClaim {
  readonly namespace: string;
  readonly volumeId: string;
  readonly zone: string;
}

/** A namespace with PVC `data` bound to a PV on a new moto EBS volume. */
export async function boundClaim(options: {
  fixtures: VolumeFixtures;
  region: string;
  source: 'csi' | 'in-tree';
}): Promise<BoundClaim> {
  const { fixtures } = options;
  const zone = `${options.region}a`;
  const namespace = await fixtures.namespace(`vol-${options.source}`);
  const volumeId = await fixtures.ebsVolume({ zone, volumeType: 'gp3' });
  const source =
    options.source === 'csi'
      ? { csi: { driver: 'ebs.csi.aws.com', volumeHandle: volumeId, fsType: 'ext4' } }
      : { awsElasticBlockStore: { volumeID: `aws://${zone}/${volumeId}`, fsType: 'ext4' } };
  await fixtures.claimWithVolume({ namespace, claim: 'data', source, zone });
  await fixtures.boundVolume({ namespace, claim: 'data' });
  return { namespace, volumeId, zone };
}

/** The restored claim once Bound, and the EBS volume id its PV points at. */
export async function restoredVolume(
  kc: KubeConfig,
  namespace: string,
): Promise<{ pvName: string; volumeId: string }> {
  const api = kc.makeApiClient(CoreV1Api);
  const pvc = await waitFor(
    `PVC ${namespace}/data to bind`,
    async () => {
      const found = await api.readNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
      return found.status?.phase === 'Bound' ? found : undefined;
    },
    { timeoutMs: 120_000 },
  );
  const pvName = pvc.spec?.volumeName ?? '';
  const pv = await api.readPersistentVolume({ name: pvName });
  const handle = pv.spec?.csi?.volumeHandle ?? pv.spec?.awsElasticBlockStore?.volumeID ?? '';
  return { pvName, volumeId: handle.split('/').at(-1) ?? '' };
}
