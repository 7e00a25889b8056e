// The Lambda sandbox of one rehearsal function: imports the bundle CDK built (its handler, as
// `file.export`), then runs one invocation at a time for the parent, with Lambda's context object.
// Started by test/rehearsal/lambda.ts with exactly the environment the template gives the function.
import { pathToFileURL } from 'node:url';

const [codeDir, handlerName] = [process.env.LAMBDA_TASK_ROOT, process.env._HANDLER];
const send = (message) => process.send?.(message);

function errorOf(error) {
  const e = error instanceof Error ? error : new Error(String(error));
  return { errorType: e.name || 'Error', errorMessage: e.message, stackTrace: (e.stack ?? '').split('\n') };
}

let handler;
try {
  const dot = handlerName.lastIndexOf('.');
  const [file, exported] = [handlerName.slice(0, dot), handlerName.slice(dot + 1)];
  const module = await import(pathToFileURL(`${codeDir}/${file}.mjs`).href);
  handler = module[exported];
  if (typeof handler !== 'function')
    throw Object.assign(new Error(`${handlerName} is undefined or not exported`), {
      name: 'Runtime.HandlerNotFound',
    });
  send({ type: 'ready' });
} catch (error) {
  send({
    type: 'init-error',
    error: {
      ...errorOf(error),
      errorType: error?.name === 'Runtime.HandlerNotFound' ? error.name : 'Runtime.ImportModuleError',
    },
  });
}

process.on('message', async (message) => {
  if (message?.type !== 'invoke') return;
  const { id, event, deadline, context } = message;
  const lambdaContext = {
    ...context,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    const value = await handler(event, lambdaContext);
    send({ type: 'result', id, ok: true, value: value === undefined ? null : value });
  } catch (error) {
    send({ type: 'result', id, ok: false, error: errorOf(error) });
  }
});
