/**
 * statemachines/delete.asl.json: valid ASL with a Comment on every state, filled by exactly the
 * placeholders the stack (DeleteWorkflow) and the local runtime give it, retrying and catching
 * only error names that exist; and its flow: garbage collection only when DeleteBackup names a
 * gc job, and RecordBackupDeletion last, whatever failed before it.
 */
import { readFileSync } from 'node:fs';
import aslValidator from 'asl-validator';
import { describe, expect, it } from 'vitest';
import { LOCAL_DELETE_FUNCTION_ARNS } from '../../cli/local/delete-runtime.js';
import { DELETE_DEFINITION_FILE } from '../../infra/constructs/delete-workflow.js';
import {
  type JsonValue,
  runLocalStateMachine,
  substitute,
} from '../../shared/adapters/local-state-machine.js';
import * as domainErrors from '../../shared/domain/errors.js';

const text = readFileSync(DELETE_DEFINITION_FILE, 'utf8');
const states = (JSON.parse(text) as { States: Record<string, Record<string, unknown>> }).States;

const AWS_ERRORS = new Set([
  'States.ALL',
  'States.TaskFailed',
  'Lambda.ServiceException',
  'Lambda.TooManyRequestsException',
  'Lambda.SdkClientException',
  'ECS.AmazonECSException',
  'ECS.ServerException',
  'AmazonECS.Unknown',
]);

describe('statemachines/delete.asl.json', () => {
  it('is valid Amazon States Language once filled, with a Comment on every state', () => {
    const { isValid, errorsText } = aslValidator(JSON.parse(substitute(text, LOCAL_DELETE_FUNCTION_ARNS)));
    expect(errorsText()).toBe('');
    expect(isValid).toBe(true);
    for (const [name, state] of Object.entries(states)) expect(state.Comment, name).toMatch(/\w/);
  });

  it('uses exactly the placeholders the local runtime fills, as the stack fills them', () => {
    const used = [...new Set([...text.matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((m) => m[1]))].sort();
    expect(used).toEqual(Object.keys(LOCAL_DELETE_FUNCTION_ARNS).sort());
  });

  it('retries and catches only error names that exist', () => {
    // Each domain error class is named as the error it throws.
    const ours = Object.values(domainErrors)
      .filter((v) => typeof v === 'function' && v.prototype instanceof Error)
      .map((v) => (v as { name: string }).name);
    for (const [name, state] of Object.entries(states))
      for (const rule of [
        ...((state.Retry as { ErrorEquals: string[] }[]) ?? []),
        ...((state.Catch as { ErrorEquals: string[] }[]) ?? []),
      ])
        for (const error of rule.ErrorEquals)
          expect(AWS_ERRORS.has(error) || ours.includes(error), `${name}: ${error}`).toBe(true);
  });
});

describe('the delete flow', () => {
  const execute = (handlers: Record<string, (input: JsonValue) => Promise<JsonValue>>) => {
    const calls: string[] = [];
    const traced = Object.fromEntries(
      Object.entries(handlers).map(([name, h]) => [
        name,
        async (input: JsonValue) => {
          calls.push(name);
          return h(input);
        },
      ]),
    );
    const done = runLocalStateMachine({
      retryIntervalMs: 0,
      definition: substitute(text, LOCAL_DELETE_FUNCTION_ARNS),
      input: { name: 'nightly', attempt: 1 },
      handlers: traced,
      executionName: 'delete-nightly.d1',
      taskToken: 't',
    });
    return { done, calls };
  };
  const recorded = async (input: JsonValue) => ({ phase: 'Processed', seen: input });

  it('collects the repository’s garbage only when DeleteBackup names a gc job, then records the request', async () => {
    const withGc = execute({
      DeleteBackup: async () => ({ deleted: true, gcJob: { jobId: 'gc-1' } }),
      CollectGarbage: async () => ({}),
      RecordBackupDeletion: recorded,
    });
    await expect(withGc.done).resolves.toMatchObject({ phase: 'Processed' });
    expect(withGc.calls).toEqual(['DeleteBackup', 'CollectGarbage', 'RecordBackupDeletion']);
    const without = execute({
      DeleteBackup: async () => ({ deleted: true }),
      CollectGarbage: async () => ({}),
      RecordBackupDeletion: recorded,
    });
    await without.done;
    expect(without.calls).toEqual(['DeleteBackup', 'RecordBackupDeletion']);
  });

  it('records a deletion that failed, with the failure, as Velero records why a backup was kept', async () => {
    const failing = execute({
      DeleteBackup: async () => {
        throw Object.assign(new Error('backup nightly is still in progress'), { name: 'BackupInProgress' });
      },
      RecordBackupDeletion: recorded,
    });
    const output = (await failing.done) as { seen: { outcome: { failure: { Error: string } } } };
    expect(failing.calls).toEqual(['DeleteBackup', 'RecordBackupDeletion']);
    expect(output.seen.outcome.failure.Error).toBe('BackupInProgress');
  });
});
