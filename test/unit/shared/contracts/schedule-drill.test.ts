import { describe, expect, it } from 'vitest';
import { parseScheduleRequest } from '../../../../shared/contracts/schedule.js';
import { ValidationFailed } from '../../../../shared/domain/errors.js';

const request = (options: { drill?: unknown; name?: string; spec?: Record<string, unknown> } = {}) => ({
  cluster: 'prod',
  schedule: {
    apiVersion: 'velero.io/v1',
    kind: 'Schedule',
    metadata: { name: options.name ?? 'nightly' },
    spec: { schedule: '0 3 * * *', template: { includedNamespaces: ['shop'] }, ...options.spec },
  },
  ...(options.drill === undefined ? {} : { drill: options.drill }),
});

function pathsOf(input: unknown): string[] {
  try {
    parseScheduleRequest(input);
  } catch (error) {
    if (error instanceof ValidationFailed) return error.problems.map((p) => p.path);
    throw error;
  }
  return [];
}

describe("a Schedule's drill target", () => {
  it('is taken beside the cluster, leaving the Velero Schedule as Velero has it', () => {
    // Prepare
    const drill = { cluster: 'dr', namespaceMapping: { shop: 'shop-drill' }, readyTimeout: '5m' };

    // Act
    const parsed = parseScheduleRequest(request({ drill }));

    // Assess
    expect(parsed.drill).toEqual(drill);
    expect(Object.keys(parsed.schedule.spec).sort()).toEqual(['schedule', 'template']);
  });

  it.each([
    [{ cluster: 'Not A Cluster' }, 'drill.cluster'],
    [{}, 'drill.cluster'],
    [{ cluster: 'dr', readyTimeout: 'soon' }, 'drill.readyTimeout'],
    [{ cluster: 'dr', readyTimeout: '25h' }, 'drill.readyTimeout'],
    [{ cluster: 'dr', namespaceMapping: { a: 'x', b: 'x' } }, 'drill.namespaceMapping'],
    [{ cluster: 'dr', namespaceMapping: { a: 'Not_Valid' } }, 'drill.namespaceMapping.a'],
    [{ cluster: 'dr', backupName: 'b' }, 'drill'],
    ['dr', 'drill'],
  ])('refuses %j by its field path', (drill, path) => {
    expect(pathsOf(request({ drill }))).toEqual([path]);
  });

  it('refuses a drill inside the Velero spec, where Velero would drop it', () => {
    expect(pathsOf(request({ spec: { drill: { cluster: 'dr' } } }))).toEqual(['schedule.spec']);
  });

  it("needs a Schedule name short enough for its drills' names, and only with a drill", () => {
    const name = 'n'.repeat(43);
    expect(pathsOf(request({ name, drill: { cluster: 'dr' } }))).toEqual(['schedule.metadata.name']);
    expect(pathsOf(request({ name: 'n'.repeat(42), drill: { cluster: 'dr' } }))).toEqual([]);
    expect(pathsOf(request({ name }))).toEqual([]);
  });
});
