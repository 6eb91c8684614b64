import { STATUS_CODES } from 'node:http';

/** An error the simulator answers with, in vLLM's error-body shape. */
export class SimError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }

  /** vLLM names the type after the status phrase: 400 BadRequestError, 503 ServiceUnavailableError … */
  get type(): string {
    const phrase = (STATUS_CODES[this.status] ?? 'Unknown').replace(/[^A-Za-z]/g, '');
    return phrase.endsWith('Error') ? phrase : `${phrase}Error`;
  }

  /** Nested since vLLM 0.10.1 (PR #22099); flat `object:"error"` before. */
  body(format: 'nested' | 'flat'): object {
    const info = { message: this.message, type: this.type, param: this.param, code: this.status };
    return format === 'nested' ? { error: info } : { object: 'error', ...info };
  }
}

export const badRequest = (message: string, param: string | null = null): SimError => new SimError(400, message, param);
