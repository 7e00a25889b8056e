/**
 * The functions of a recipe backup's steps (docs/recipes.md): CollectRecipeItems (reads the
 * recipe ConfigMap and lists the cluster, with the cluster-reading role), BackupRecipeGroup
 * (sends a group's ItemBlocks to the workers and waits on them: no cluster access) and
 * RunRecipeHook (lists pods and execs hooks, with the cluster-reading role, whose access entry
 * carries the hook-exec group). Grants are added by the workflow, as for its other functions.
 */
import { Duration } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { HOOK_EXEC_GROUP } from './hook-runner.js';
import { stepFunction } from './step-function.js';
import type { BackupStore, StorageAccess } from './storage-access.js';

export interface RecipeFunctions<F = NodejsFunction> {
  readonly collect: F;
  readonly group: F;
  readonly hook: F;
}

export function backupRecipeFunctions(
  scope: Construct,
  options: { environment: Record<string, string>; store: BackupStore; clusters: readonly string[] },
): RecipeFunctions {
  const { environment, store, clusters } = options;
  const work: StorageAccess = { writes: ['backupWork', 'backupClaims'] };
  return {
    // Reads the recipe's ConfigMap and lists what the request selects.
    collect: stepFunction(scope, 'CollectRecipeItems', {
      memoryMb: 1024,
      timeout: Duration.minutes(15),
      environment,
      store,
      access: work,
      cluster: { clusters, accessPolicy: 'AmazonEKSAdminViewPolicy' },
    }),
    group: stepFunction(scope, 'BackupRecipeGroup', {
      memoryMb: 512,
      timeout: Duration.minutes(5),
      environment,
      store,
      access: work,
    }),
    // Hook steps up to the inline limit run here; longer ones in the hook runner. It finds its
    // pods by label and execs in them: the hook-exec group, nothing else of the cluster.
    hook: stepFunction(scope, 'RunRecipeHook', {
      memoryMb: 512,
      timeout: Duration.minutes(15),
      environment,
      store,
      access: work,
      cluster: { clusters, kubernetesGroups: [HOOK_EXEC_GROUP] },
    }),
  };
}

export function recipeSubstitutions(functions: RecipeFunctions<IFunction>): Record<string, string> {
  return {
    CollectRecipeItemsFunctionArn: functions.collect.functionArn,
    BackupRecipeGroupFunctionArn: functions.group.functionArn,
    RunRecipeHookFunctionArn: functions.hook.functionArn,
  };
}
