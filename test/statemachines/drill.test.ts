/** statemachines/drill.asl.json: valid ASL, a Comment on every state, and only known error names. */
import { readFileSync } from 'node:fs';
import aslValidator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { DRILL_DEFINITION, LOCAL_DRILL_ARNS } from '../../cli/local/drill-runtime.js';
import { substitute } from '../../shared/adapters/local-state-machine.js';
import * as domainErrors from '../../shared/domain/errors.js';

const definition = JSON.parse(substitute(readFileSync(DRILL_DEFINITION, 'utf8'), LOCAL_DRILL_ARNS)) as {
  States: Record<string, Record<string, unknown>>;
};
const states = Object.entries(definition.States);

describe('statemachines/drill.asl.json', () => {
  it('is valid Amazon States Language', () => {
    const { isValid, errorsText } = aslValidator(definition);
    expect(errorsText()).toBe('');
    expect(isValid).toBe(true);
  });

  it('has a Comment on every state', () => {
    expect(
      states.filter(([, s]) => typeof s.Comment !== 'string' || s.Comment === '').map(([n]) => n),
    ).toEqual([]);
  });

  it('retries and catches only errors that exist', () => {
    const ours = new Set(
      Object.values(domainErrors)
        .filter((v) => typeof v === 'function' && v.prototype instanceof Error)
        .map((v) => (Reflect.construct(v as new (...a: unknown[]) => Error, [[], {}]) as Error).name),
    );
    const aws = [
      'States.ALL',
      'Lambda.ServiceException',
      'Lambda.TooManyRequestsException',
      'Lambda.SdkClientException',
    ];
    const named = states.flatMap(([, s]) =>
      [
        ...((s.Retry as { ErrorEquals: string[] }[]) ?? []),
        ...((s.Catch as { ErrorEquals: string[] }[]) ?? []),
      ].flatMap((r) => r.ErrorEquals),
    );
    expect(named.filter((n) => !ours.has(n) && !aws.includes(n))).toEqual([]);
  });

  it('waits for readiness in a Wait state, never in a Task', () => {
    expect(definition.States.WaitForReadiness).toMatchObject({ Type: 'Wait', Next: 'CheckDrillReadiness' });
    expect(definition.States.RunRestore?.Resource).toBe('arn:aws:states:::states:startExecution.sync:2');
  });

  it("clears an earlier drill's namespaces before the restore, waiting in a Wait state", () => {
    expect(definition.States.IsDrillValid?.Default).toBe('ClearDrillNamespaces');
    expect(definition.States.ClearDrillNamespaces).toMatchObject({
      Type: 'Task',
      Next: 'AreDrillNamespacesClear',
    });
    expect(definition.States.AreDrillNamespacesClear).toMatchObject({
      Choices: [
        { Variable: '$.clearing.cleared', Next: 'RunRestore' },
        { Variable: '$.clearing.expired', Next: 'ClearingExpired' },
      ],
      Default: 'WaitForClearing',
    });
    expect(definition.States.WaitForClearing).toMatchObject({ Type: 'Wait', Next: 'ClearDrillNamespaces' });
    for (const end of ['ClearingExpired', 'ClearFailed'])
      expect(definition.States[end]).toMatchObject({ Type: 'Pass', Next: 'FinishDrill' });
  });
});
