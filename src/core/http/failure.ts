/**
 * Every way one HTTP exchange with an endpoint can fail, reduced to what the pool decides on:
 * retry, fail over, or give up. Codes come from undici and node:net.
 */
export type FailureKind =
  | 'refused' //   nothing listens: the server is down or still booting, not busy
  | 'tunnel' //    the SSH route to the endpoint is gone (forward closed, proxy unreachable)
  | 'reset' //     the connection dropped mid-exchange
  | 'timeout' //   no answer within the deadline
  | 'http' //      the server answered with an error status
  | 'protocol' //  the server answered 200 with something we cannot use
  | 'cancelled'; // the caller cancelled

export class RequestFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RequestFailure';
  }

  /** Transient failures (notes §4.4-5): resets, timeouts and gateway errors; never other 4xx. */
  get transient(): boolean {
    if (this.kind === 'reset' || this.kind === 'timeout' || this.kind === 'refused' || this.kind === 'tunnel') return true;
    return this.kind === 'http' && (this.status === 502 || this.status === 503 || this.status === 504);
  }

  /** The endpoint itself is gone, so its prompts may go elsewhere. */
  get endpointDown(): boolean {
    return this.kind === 'refused' || this.kind === 'reset' || this.kind === 'tunnel';
  }
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED', 'UND_ERR_CLOSED']);
const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);
const REFUSED_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Maps a thrown error to a RequestFailure; `timedOut` tells our own deadline from a user cancel.
 * Through an SSH forward, a refused connection means the forward is gone, not the endpoint.
 */
export function toFailure(err: unknown, timedOut: boolean, timeoutMs: number, viaForward = false): RequestFailure {
  if (err instanceof RequestFailure) return err;
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'ETUNNEL') return new RequestFailure('tunnel', `tunnel down: ${message}`);
  if (code === 'ECONNREFUSED' && viaForward) return new RequestFailure('tunnel', `tunnel down: ${message}`);
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new RequestFailure('timeout', `timed out after ${(timeoutMs / 1000).toFixed(1)} s (${code ?? 'deadline'})`);
  }
  if (code === 'UND_ERR_ABORTED' || (err instanceof Error && err.name === 'AbortError')) {
    return new RequestFailure('cancelled', 'cancelled');
  }
  if (code !== undefined && REFUSED_CODES.has(code)) return new RequestFailure('refused', `${code}: ${message}`);
  if (code !== undefined && RESET_CODES.has(code)) return new RequestFailure('reset', `${code}: ${message}`);
  return new RequestFailure('protocol', code ? `${code}: ${message}` : message);
}

function errorCode(err: unknown): string | undefined {
  // undici wraps socket errors; the useful code may sit on the cause.
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
  }
  return undefined;
}

/**
 * The message of a vLLM error body in either shape: nested `{"error":{"message"}}` (≥ v0.10.1)
 * or flat `{"object":"error","message"}` (older), falling back to FastAPI's `detail` or the raw text.
 */
export function serverErrorMessage(status: number, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const text = body.trim().slice(0, 300);
    return text ? `HTTP ${status}: ${text}` : `HTTP ${status}`;
  }
  const obj = (parsed ?? {}) as Record<string, unknown>;
  const nested = obj.error as Record<string, unknown> | string | undefined;
  const message =
    (typeof nested === 'object' && nested !== null && typeof nested.message === 'string' && nested.message) ||
    (typeof nested === 'string' && nested) ||
    (typeof obj.message === 'string' && obj.message) ||
    (typeof obj.detail === 'string' && obj.detail) ||
    '';
  return message ? `HTTP ${status}: ${message}` : `HTTP ${status}`;
}
