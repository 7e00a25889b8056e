/**
 * The HTTP API: one router for every route of docs/api.yaml, taking API Gateway's proxy event
 * (the REST API in AWS, the local server's adapter under `lifeboat server --local`) and answering
 * JSON. An unknown route is a 404, a known one with another method a 405, a name that cannot be a
 * Kubernetes name a 400; anything unexpected a 500 whose body says only that it failed and under
 * which request id, never a stack trace (the log has the error).
 */
import { LifeboatError } from '../../shared/domain/errors.js';
import { backupFileLink, createBackup, describeBackup, getBackup, listBackups } from './backups.js';
import { deleteBackup, getDeletion } from './deletions.js';
import type { ApiDeps } from './deps.js';
import { createDrill, getDrill, listDrills } from './drills.js';
import { type ApiEvent, type ApiResult, failure, invalid, json } from './http.js';
import {
  createRestore,
  deleteRestore,
  describeRestore,
  getRestore,
  listRestores,
  restoreLogs,
} from './restores.js';
import {
  backupFromScheduleRoute,
  createScheduleRoute,
  deleteScheduleRoute,
  garbageRoute,
  getScheduleRoute,
  listSchedulesRoute,
  pauseScheduleRoute,
} from './schedules.js';

type Route = (call: { event: ApiEvent; name: string; deps: ApiDeps }) => Promise<ApiResult>;

/** Path templates (as docs/api.yaml spells them) to their methods. */
export const ROUTES: Readonly<Record<string, Readonly<Record<string, Route>>>> = {
  '/backups': {
    POST: ({ event, deps }) => createBackup(event, deps),
    GET: ({ event, deps }) => listBackups(event, deps),
  },
  '/backups/{name}': {
    GET: ({ name, deps }) => getBackup(name, deps),
    DELETE: ({ name, deps }) => deleteBackup(name, deps),
  },
  '/backups/{name}/describe': { GET: ({ name, deps }) => describeBackup(name, deps) },
  '/backups/{name}/logs': { GET: ({ name, deps }) => backupFileLink({ name, file: 'logs', deps }) },
  '/backups/{name}/download': { GET: ({ name, deps }) => backupFileLink({ name, file: 'contents', deps }) },
  '/backups/{name}/deletion': { GET: ({ name, deps }) => getDeletion(name, deps) },
  '/restores': {
    POST: ({ event, deps }) => createRestore(event, deps),
    GET: ({ event, deps }) => listRestores(event, deps),
  },
  '/restores/{name}': {
    GET: ({ name, deps }) => getRestore(name, deps),
    DELETE: ({ name, deps }) => deleteRestore(name, deps),
  },
  '/restores/{name}/describe': { GET: ({ name, deps }) => describeRestore(name, deps) },
  '/restores/{name}/logs': { GET: ({ name, deps }) => restoreLogs(name, deps) },
  '/clusters': { GET: async ({ deps }) => json(200, { items: deps.clusters.map((name) => ({ name })) }) },
  '/drills': {
    POST: ({ event, deps }) => createDrill(event, deps),
    GET: ({ deps }) => listDrills(deps),
  },
  '/drills/{name}': { GET: ({ name, deps }) => getDrill(name, deps) },
  '/schedules': {
    POST: ({ event, deps }) => createScheduleRoute(event, deps),
    GET: ({ deps }) => listSchedulesRoute(deps),
  },
  '/schedules/{name}': {
    GET: ({ name, deps }) => getScheduleRoute(name, deps),
    DELETE: ({ name, deps }) => deleteScheduleRoute(name, deps),
  },
  '/schedules/{name}/pause': { POST: ({ name, deps }) => pauseScheduleRoute({ name, paused: true, deps }) },
  '/schedules/{name}/unpause': {
    POST: ({ name, deps }) => pauseScheduleRoute({ name, paused: false, deps }),
  },
  '/schedules/{name}/backups': { POST: ({ name, deps }) => backupFromScheduleRoute(name, deps) },
  '/gc': { GET: ({ event, deps }) => garbageRoute(event, deps) },
};

/** A Kubernetes object name (DNS subdomain): what a backup or restore may be called. */
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The route template a path matches, and the name it carries. */
export function matchRoute(path: string): { template: string; name: string } | undefined {
  const parts = path.split('/').filter(Boolean);
  for (const template of Object.keys(ROUTES)) {
    const shape = template.split('/').filter(Boolean);
    if (shape.length !== parts.length) continue;
    let name = '';
    const fits = shape.every((s, i) => {
      if (s === '{name}') {
        name = decodeURIComponent(parts[i] ?? '');
        return true;
      }
      return s === parts[i];
    });
    if (fits) return { template, name };
  }
  return undefined;
}

export async function handleApiRequest(event: ApiEvent, deps: ApiDeps): Promise<ApiResult> {
  const matched = matchRoute(event.path);
  if (!matched) return failure({ status: 404, code: 'NotFound', message: `no route ${event.path}` });
  const methods = ROUTES[matched.template] ?? {};
  const route = methods[event.httpMethod];
  if (!route)
    return {
      ...failure({
        status: 405,
        code: 'MethodNotAllowed',
        message: `${event.httpMethod} is not allowed on ${matched.template}`,
      }),
      headers: { 'content-type': 'application/json', allow: Object.keys(methods).join(', ') },
    };
  if (matched.template.includes('{name}') && (matched.name.length > 253 || !NAME.test(matched.name)))
    return invalid([
      { path: 'name', message: `is not a Kubernetes object name: ${JSON.stringify(matched.name)}` },
    ]);
  try {
    return await route({ event, name: matched.name, deps });
  } catch (error) {
    return unexpected({ error, event, deps });
  }
}

/** A failure of the service itself: passed on as busy (429, 503) or a bare 500; logged by the caller. */
function unexpected(options: { error: unknown; event: ApiEvent; deps: ApiDeps }): ApiResult {
  const { error, deps } = options;
  deps.onError?.(error);
  if (error instanceof LifeboatError && error.retryable) {
    const throttled = /throttl|too many requests|rate exceeded/i.test(error.message);
    return {
      ...failure({
        status: throttled ? 429 : 503,
        code: throttled ? 'TooManyRequests' : 'ServiceUnavailable',
        message: 'a service Lifeboat uses is busy: try again',
      }),
      headers: { 'content-type': 'application/json', 'retry-after': '1' },
    };
  }
  const id = options.event.requestContext?.requestId;
  return failure({
    status: 500,
    code: 'InternalError',
    message: `the request failed${id ? ` (request id ${id})` : ''}; the service's log says why`,
  });
}
