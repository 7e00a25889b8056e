/**
 * EventBridge Scheduler's REST API in IAM's terms, for the rehearsal's gateway: each schedule is
 * authorized by its ARN in its group (`schedule/<group>/<name>`); creating or updating one also
 * passes its target's role to Scheduler (`iam:PassRole` with `iam:PassedToService`); listing has no
 * resource-level permission.
 */

/** What aws-requests.ts gives this module (its own types, structurally, without a cycle). */
interface SignedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: Buffer;
}
interface ClassifyContext {
  readonly region: string;
  readonly account: string;
}
interface RequestedAction {
  readonly action: string;
  readonly resources: readonly string[];
  readonly context?: Readonly<Record<string, string>>;
}

const OPERATIONS: Readonly<Record<string, string>> = {
  POST: 'CreateSchedule',
  PUT: 'UpdateSchedule',
  GET: 'GetSchedule',
  DELETE: 'DeleteSchedule',
};

function bodyOf(request: SignedRequest): Record<string, unknown> {
  try {
    return JSON.parse(request.body.toString('utf8') || '{}') as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The operation and the actions it needs; undefined for a path that is not a schedule's. */
export function schedulerRequest(
  request: SignedRequest,
  ctx: ClassifyContext,
): { operation: string; actions: RequestedAction[] } | undefined {
  const parts = request.path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'schedules' || parts.length > 2) return undefined;
  if (parts.length === 1)
    return request.method === 'GET'
      ? { operation: 'ListSchedules', actions: [{ action: 'scheduler:ListSchedules', resources: ['*'] }] }
      : undefined;
  const operation = OPERATIONS[request.method];
  if (!operation) return undefined;
  const body = bodyOf(request);
  const group = String(body.GroupName ?? request.query.get('groupName') ?? 'default');
  const arn = `arn:aws:scheduler:${ctx.region}:${ctx.account}:schedule/${group}/${parts[1]}`;
  const actions: RequestedAction[] = [{ action: `scheduler:${operation}`, resources: [arn] }];
  const role = (body.Target as { RoleArn?: unknown } | undefined)?.RoleArn;
  if (operation === 'CreateSchedule' || operation === 'UpdateSchedule')
    actions.push({
      action: 'iam:PassRole',
      resources: [typeof role === 'string' ? role : '*'],
      context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
    });
  return { operation, actions };
}
