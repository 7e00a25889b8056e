/**
 * ECS Fargate, for the rehearsal's `ecs:runTask.sync` states: the task definition the state
 * names is read from the template; its container's image is the Docker asset of the assembly,
 * whose Dockerfile is followed as far as it matters here — its esbuild step builds the entry from
 * the asset's own copy of the sources (the repository's installed packages stand for `npm ci`),
 * and its ENTRYPOINT runs as a child process with the container's environment, the state's
 * overrides, the task role's credentials and AWS_ENDPOINT_URL at the gateway. Exit code 0 ends
 * the state as ECS reports a stopped task; anything else fails it with States.TaskFailed. The
 * state machine's own permissions for the call (RunTask in that cluster, PassRole, the .sync
 * rule) and the execution role's (image pull, logs) are evaluated as ECS would need them.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './assembly.js';
import type { Deployment } from './deploy.js';
import type { IamPolicies } from './iam.js';
import type { Meter } from './meter.js';
import { type Json, resolve, resolveString, resourcesOf } from './template.js';

interface ContainerDefinition {
  readonly name: string;
  readonly image: string;
  readonly environment: Record<string, string>;
  readonly logGroup?: string;
}

export interface TaskDefinition {
  readonly arn: string;
  readonly cpu: number;
  readonly memoryMb: number;
  readonly taskRoleArn: string;
  readonly executionRoleArn: string;
  readonly containers: readonly ContainerDefinition[];
}

export function taskDefinitionsOf(deployment: Deployment): Map<string, TaskDefinition> {
  const { resolver, assembly } = deployment;
  const definitions = new Map<string, TaskDefinition>();
  for (const [id, r] of resourcesOf(assembly.template, 'AWS::ECS::TaskDefinition')) {
    const p = resolve(resolver, (r.Properties ?? {}) as Json) as Record<string, Json>;
    const arn = resolver.physical.get(id)?.ref ?? id;
    definitions.set(arn, {
      arn,
      cpu: Number(p.Cpu),
      memoryMb: Number(p.Memory),
      taskRoleArn: String(p.TaskRoleArn ?? ''),
      executionRoleArn: String(p.ExecutionRoleArn ?? ''),
      containers: ((p.ContainerDefinitions ?? []) as Record<string, Json>[]).map((c) => ({
        name: String(c.Name),
        image: String(c.Image),
        environment: Object.fromEntries(
          ((c.Environment ?? []) as { Name: string; Value: string }[]).map((e) => [e.Name, String(e.Value)]),
        ),
        ...(c.LogConfiguration
          ? {
              logGroup: String(
                (c.LogConfiguration as { Options: Record<string, string> }).Options['awslogs-group'],
              ),
            }
          : {}),
      })),
    });
  }
  return definitions;
}

/** The esbuild step and the entry point of the image recipe, read from its Dockerfile. */
async function imageRecipe(dockerfile: string): Promise<{ build: string; entrypoint: string[] }> {
  const text = (await readFile(dockerfile, 'utf8')).replace(/\\\n\s*/g, ' ');
  const build = text.split('\n').find((l) => /^RUN .*\bnpx esbuild\b/.test(l));
  const entrypoint = text.split('\n').find((l) => l.startsWith('ENTRYPOINT '));
  if (!build || !entrypoint) throw new Error(`rehearsal: ${dockerfile} has no esbuild step or entry point`);
  const command = build
    .slice(build.indexOf('npx esbuild'))
    .replace('npx esbuild', join(ROOT, 'node_modules', '.bin', 'esbuild'));
  return { build: command, entrypoint: JSON.parse(entrypoint.slice('ENTRYPOINT '.length)) as string[] };
}

function runProcess(options: { command: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (c: Buffer) => {
    output = (output + c.toString('utf8')).slice(-8000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return new Promise<{ code: number; output: string }>((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? 1, output }));
  });
}

export class EcsTasks {
  private readonly definitions: Map<string, TaskDefinition>;
  private readonly built = new Map<string, Promise<{ dir: string; entrypoint: string[] }>>();

  constructor(
    private readonly options: { deployment: Deployment; gateway: string; iam: IamPolicies; meter: Meter },
  ) {
    this.definitions = taskDefinitionsOf(options.deployment);
  }

  /** The image of a container: built once per asset from its Dockerfile's esbuild step. */
  private image(container: ContainerDefinition): Promise<{ dir: string; entrypoint: string[] }> {
    const hash = container.image.split(':').pop() ?? '';
    let made = this.built.get(hash);
    if (!made) {
      made = this.buildImage(hash);
      this.built.set(hash, made);
    }
    return made;
  }

  private async buildImage(hash: string): Promise<{ dir: string; entrypoint: string[] }> {
    const { assembly } = this.options.deployment;
    const asset = assembly.assets.dockerImages?.[hash];
    if (!asset) throw new Error(`rehearsal: no image asset ${hash}`);
    const context = join(assembly.dir, asset.source.directory);
    const recipe = await imageRecipe(join(context, asset.source.dockerFile ?? 'Dockerfile'));
    const args = asset.source.dockerBuildArgs ?? {};
    const key = createHash('sha256').update(hash).digest('hex').slice(0, 12);
    const out = join(assembly.dir, `image-${key}`);
    if (!existsSync(join(out, 'main.mjs'))) {
      await mkdir(out, { recursive: true });
      // The image's build output (`/out/…`, `--outdir=/out`) goes to the rehearsal's directory.
      const command = recipe.build.replace(/(?<=[=\s])\/out(?=\/|\s|$)/g, out);
      const result = await runProcess({
        command: 'sh',
        args: ['-c', command],
        cwd: context,
        env: { ...process.env, ...args },
      });
      if (result.code !== 0) throw new Error(`rehearsal: building image ${hash} failed:\n${result.output}`);
    }
    return { dir: out, entrypoint: recipe.entrypoint };
  }

  /** What the state machine's role needs for `ecs:runTask.sync` of this definition in this cluster. */
  private async authorizeRun(options: {
    machineRoleArn: string;
    machine: string;
    cluster: string;
    definition: TaskDefinition;
  }) {
    const { machineRoleArn, machine, cluster, definition } = options;
    const { region, account } = this.options.deployment.target;
    const clusterName = cluster.split('/').pop() ?? cluster;
    const task = `arn:aws:ecs:${region}:${account}:task/${clusterName}/rehearsal`;
    const rule = `arn:aws:events:${region}:${account}:rule/StepFunctionsGetEventsForECSTaskRule`;
    const calls: { action: string; resources: string[]; context?: Record<string, string> }[] = [
      { action: 'ecs:RunTask', resources: [definition.arn], context: { 'ecs:cluster': cluster } },
      {
        action: 'iam:PassRole',
        resources: [definition.taskRoleArn, definition.executionRoleArn],
        context: { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' },
      },
      { action: 'ecs:DescribeTasks', resources: [task] },
      { action: 'events:PutTargets', resources: [rule] },
      { action: 'events:PutRule', resources: [rule] },
      { action: 'events:DescribeRule', resources: [rule] },
    ];
    for (const call of calls) {
      const decision = await this.options.iam.evaluate({
        principal: machineRoleArn,
        caller: machine,
        ...call,
      });
      if (!decision.allowed)
        throw Object.assign(new Error(decision.detail), { name: 'ECS.AccessDeniedException' });
    }
  }

  /** What the execution role needs before the container starts: the image and its log stream. */
  private async authorizeStart(definition: TaskDefinition, container: ContainerDefinition): Promise<void> {
    const { region, account } = this.options.deployment.target;
    const repository = container.image.split('/').slice(1).join('/').split(':')[0] ?? '';
    const caller = `ECS agent (${container.name})`;
    const calls = [
      { action: 'ecr:GetAuthorizationToken', resources: ['*'] },
      {
        action: 'ecr:BatchGetImage',
        resources: [`arn:aws:ecr:${region}:${account}:repository/${repository}`],
      },
      {
        action: 'ecr:GetDownloadUrlForLayer',
        resources: [`arn:aws:ecr:${region}:${account}:repository/${repository}`],
      },
      ...(container.logGroup
        ? ['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({
            action,
            resources: [
              `arn:aws:logs:${region}:${account}:log-group:${container.logGroup}:log-stream:rehearsal`,
            ],
          }))
        : []),
    ];
    for (const call of calls) {
      const decision = await this.options.iam.evaluate({
        principal: definition.executionRoleArn,
        caller,
        ...call,
      });
      if (!decision.allowed) throw Object.assign(new Error(decision.detail), { name: 'States.TaskFailed' });
    }
  }

  /** `ecs:runTask.sync` with the state's (resolved) parameters. */
  async runTask(options: {
    parameters: Record<string, Json>;
    machine: string;
    machineRoleArn: string;
  }): Promise<Json> {
    const p = options.parameters;
    const definition = this.definitions.get(String(p.TaskDefinition));
    if (!definition)
      throw Object.assign(new Error(`no task definition ${String(p.TaskDefinition)}`), {
        name: 'ECS.InvalidParameterException',
      });
    const cluster = String(p.Cluster);
    await this.authorizeRun({ ...options, cluster, definition });
    const [container] = definition.containers;
    if (!container) throw new Error('rehearsal: a task definition without a container');
    await this.authorizeStart(definition, container);
    const override = (
      (p.Overrides as { ContainerOverrides?: Record<string, Json>[] } | undefined)?.ContainerOverrides ?? []
    ).find((o) => o.Name === container.name);
    const image = await this.image(container);
    const credentials = await this.options.deployment.assume({
      roleArn: definition.taskRoleArn,
      caller: `${container.name} task`,
    });
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...container.environment,
      ...Object.fromEntries(
        ((override?.Environment ?? []) as { Name: string; Value: string }[]).map((e) => [e.Name, e.Value]),
      ),
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SESSION_TOKEN: credentials.sessionToken,
      AWS_ENDPOINT_URL: this.options.gateway,
    };
    const [command = 'node', ...entryArgs] = image.entrypoint;
    const started = Date.now();
    const result = await runProcess({
      command: command === 'node' ? process.execPath : command,
      args: [...entryArgs, ...((override?.Command ?? []) as string[])],
      cwd: image.dir,
      env,
    });
    this.options.meter.task({
      cpu: definition.cpu,
      memoryMb: definition.memoryMb,
      durationMs: Date.now() - started,
    });
    const task = {
      TaskArn: `arn:aws:ecs:${this.options.deployment.target.region}:${this.options.deployment.target.account}:task/${cluster.split('/').pop()}/${started}`,
      TaskDefinitionArn: definition.arn,
      LastStatus: 'STOPPED',
      StopCode: 'EssentialContainerExited',
      Containers: [{ Name: container.name, ExitCode: result.code, LastStatus: 'STOPPED' }],
    };
    if (result.code !== 0)
      throw Object.assign(new Error(JSON.stringify({ ...task, Output: result.output.slice(-2000) })), {
        name: 'States.TaskFailed',
      });
    return task;
  }
}

/** The role ARN a state machine of the template runs as. */
export function stateMachineRole(deployment: Deployment, machineLogicalId: string): string {
  const r = deployment.assembly.template.Resources[machineLogicalId];
  return resolveString(deployment.resolver, r?.Properties?.RoleArn ?? null);
}
