import { describe, expect, it } from 'vitest';
import { notReadyBecause } from '../../../../../shared/domain/drills/readiness.js';

const deployment = (options: {
  generation: number;
  observed: number;
  replicas?: number;
  available?: number;
}) => ({
  metadata: { generation: options.generation },
  spec: options.replicas === undefined ? {} : { replicas: options.replicas },
  status: { observedGeneration: options.observed, availableReplicas: options.available },
});

describe('whether a restored workload is ready', () => {
  it.each([
    [deployment({ generation: 1, observed: 1, replicas: 2, available: 2 }), undefined],
    [deployment({ generation: 1, observed: 1, replicas: 0 }), undefined],
    [deployment({ generation: 1, observed: 1, available: 1 }), undefined],
    [deployment({ generation: 1, observed: 1, replicas: 2, available: 1 }), '1 of 2 replicas available'],
    [
      deployment({ generation: 2, observed: 1, replicas: 2, available: 2 }),
      'its controller has not seen its latest spec',
    ],
    [{ spec: { replicas: 1 } }, '0 of 1 replicas available'],
  ])('judges a Deployment %j', (live, expected) => {
    expect(notReadyBecause({ readiness: 'available', kind: 'Deployment', live })).toBe(expected);
  });

  it('counts ready replicas for a StatefulSet', () => {
    const live = { spec: { replicas: 2 }, status: { readyReplicas: 2, availableReplicas: 0 } };
    expect(notReadyBecause({ readiness: 'available', kind: 'StatefulSet', live })).toBeUndefined();
    const notYet = { spec: { replicas: 2 }, status: { readyReplicas: 1, availableReplicas: 2 } };
    expect(notReadyBecause({ readiness: 'available', kind: 'StatefulSet', live: notYet })).toBe(
      '1 of 2 replicas available',
    );
  });

  it('waits for a PVC to be Bound', () => {
    expect(
      notReadyBecause({
        readiness: 'bound',
        kind: 'PersistentVolumeClaim',
        live: { status: { phase: 'Bound' } },
      }),
    ).toBeUndefined();
    expect(
      notReadyBecause({
        readiness: 'bound',
        kind: 'PersistentVolumeClaim',
        live: { status: { phase: 'Pending' } },
      }),
    ).toBe('phase Pending, not Bound');
  });
});
