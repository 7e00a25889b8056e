/** Waking a waiting Step Functions task; a token already used or timed out is not an error. */
import {
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  type SFNClient,
  SFNServiceException,
} from '@aws-sdk/client-sfn';
import type { TaskCallbacks } from '../ports/task-callbacks.js';

const SETTLED = new Set(['TaskTimedOut', 'InvalidToken', 'TaskDoesNotExist']);

export class SfnTaskCallbacks implements TaskCallbacks {
  private readonly client: SFNClient;

  constructor(client: SFNClient) {
    this.client = client;
  }

  async succeed(token: string, output: unknown): Promise<void> {
    try {
      await this.client.send(
        new SendTaskSuccessCommand({ taskToken: token, output: JSON.stringify(output) }),
      );
    } catch (error) {
      if (!(error instanceof SFNServiceException && SETTLED.has(error.name))) throw error;
    }
  }

  async fail(token: string, error: { name: string; cause: string }): Promise<void> {
    try {
      await this.client.send(
        new SendTaskFailureCommand({ taskToken: token, error: error.name, cause: error.cause }),
      );
    } catch (e) {
      if (!(e instanceof SFNServiceException && SETTLED.has(e.name))) throw e;
    }
  }
}
