/**
 * The HTTP API (docs/api.yaml): an API Gateway REST API whose every route goes, as a Lambda proxy
 * integration, to the Api function (functions/api), which validates as the state machines do and
 * starts them. Callers sign with SigV4 (IAM authorization); an optional resource policy names the
 * principals that may call at all. Every request is access-logged (JSON, to a KMS-encrypted log
 * group), the stage throttles, and API Gateway's own refusals (403 of IAM, 429 of throttling)
 * carry the same JSON error body as the function's answers. The function's role reads the
 * storage, starts and describes the workflows (the DR drill's too), and writes only deletion requests and name
 * generations, and deletes only a restore's files and record (`restore delete`).
 */
import { ArnFormat, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  AuthorizationType,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { type IPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { acknowledgeStepFunctions, stepFunction } from './step-function.js';
import type { BackupStore } from './storage-access.js';

export interface LifeboatApiProps {
  readonly store: BackupStore;
  readonly clusters: readonly string[];
  readonly stateMachines: {
    readonly backup: StateMachine;
    readonly restore: StateMachine;
    readonly delete: StateMachine;
  };
  /** The DR drill workflow (POST /drills), when the stack has one. */
  readonly drillStateMachine?: StateMachine;
  /** Only these principals may call the API (a resource policy); default: any the account's IAM allows. */
  readonly allowedPrincipals?: readonly IPrincipal[];
  /** Requests per second across the stage, and the burst (default 50 and 100). */
  readonly throttle?: { readonly rate: number; readonly burst: number };
}

/** The error body of API Gateway's own answers: the API's ApiError shape. */
const ERROR_BODY = '{"code":"$context.error.responseType","message":$context.error.messageString}';

export class LifeboatApi extends Construct {
  readonly api: RestApi;

  constructor(scope: Construct, id: string, props: LifeboatApiProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { store, stateMachines } = props;
    const fn = stepFunction(this, 'Api', {
      memoryMb: 512,
      timeout: Duration.seconds(29),
      store,
      environment: {
        LIFEBOAT_BUCKET: store.bucket.bucketName,
        LIFEBOAT_PREFIX: store.prefix,
        LIFEBOAT_CLUSTERS: props.clusters.join(','),
        LIFEBOAT_BACKUP_STATE_MACHINE_ARN: stateMachines.backup.stateMachineArn,
        LIFEBOAT_RESTORE_STATE_MACHINE_ARN: stateMachines.restore.stateMachineArn,
        LIFEBOAT_DELETE_STATE_MACHINE_ARN: stateMachines.delete.stateMachineArn,
        ...(props.drillStateMachine
          ? { LIFEBOAT_DRILL_STATE_MACHINE_ARN: props.drillStateMachine.stateMachineArn }
          : {}),
        NODE_OPTIONS: '--enable-source-maps',
      },
      access: {
        writes: ['deleteRequests', 'generations'],
        deletes: ['restores', 'restoreRecords', 'restoreClaims'],
      },
    });
    // Starts the workflows; looks up their executions (by name: arn:…:execution:<machine>:<name>).
    const started = {
      ...stateMachines,
      ...(props.drillStateMachine ? { drill: props.drillStateMachine } : {}),
    };
    for (const machine of Object.values(started)) machine.grantStartExecution(fn);
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    for (const workflow of Object.keys(started)) {
      const machineName = `${stack.stackName}-${workflow}`;
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['states:DescribeExecution'],
          resources: [
            stack.formatArn({
              service: 'states',
              resource: 'execution',
              resourceName: `${machineName}:*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ],
        }),
      );
      Validations.of(this).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:${region}:${account}:execution:${machineName}:*]`,
        reason: `The API describes the ${workflow} workflow's executions, named after the objects requests name`,
      });
    }
    acknowledgeStepFunctions(this, { store, invokedByStateMachine: [] });
    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.ONE_YEAR,
      encryptionKey: store.key,
    });
    this.api = new RestApi(this, 'RestApi', {
      restApiName: `${stack.stackName}-api`,
      description: 'Lifeboat: backups, restores and deletions of Kubernetes clusters (docs/api.yaml)',
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole: false,
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
      ...(props.allowedPrincipals ? { policy: resourcePolicy(props.allowedPrincipals) } : {}),
      deployOptions: {
        stageName: 'v1',
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields({
          caller: true,
          httpMethod: true,
          ip: true,
          protocol: true,
          requestTime: true,
          resourcePath: true,
          responseLength: true,
          status: true,
          user: true,
        }),
        throttlingRateLimit: props.throttle?.rate ?? 50,
        throttlingBurstLimit: props.throttle?.burst ?? 100,
      },
    });
    const integration = new LambdaIntegration(fn, { proxy: true });
    this.api.root.addMethod('ANY', integration);
    this.api.root.addProxy({ defaultIntegration: integration, anyMethod: true });
    for (const type of [ResponseType.DEFAULT_4XX, ResponseType.DEFAULT_5XX])
      this.api.addGatewayResponse(`${type.responseType}Body`, {
        type,
        templates: { 'application/json': ERROR_BODY },
      });
    acknowledgeApi(this);
  }
}

/** Lets only the principals named invoke the API (and IAM still decides for each of them). */
function resourcePolicy(principals: readonly IPrincipal[]): PolicyDocument {
  return new PolicyDocument({
    statements: [
      new PolicyStatement({
        actions: ['execute-api:Invoke'],
        principals: [...principals],
        resources: ['execute-api:/*'],
      }),
    ],
  });
}

function acknowledgeApi(scope: Construct): void {
  const acknowledge = (id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });
  acknowledge(
    'AwsSolutions-APIG2',
    'The Api function validates every body with the schemas the state machines use, answering 400 with each problem by field path',
  );
  acknowledge(
    'AwsSolutions-APIG3',
    'IAM (SigV4) authorization and stage throttling; a WAF web ACL is the deployer’s choice',
  );
  acknowledge(
    'AwsSolutions-APIG6',
    'Every request is in the access log; execution logging needs an account-wide API Gateway role the stack does not impose',
  );
  acknowledge('AwsSolutions-COG4', 'Callers are IAM principals (SigV4): IAM authorization on every method');
}
