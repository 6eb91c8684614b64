/**
 * Every way one HTTP exchange with an endpoint can fail, reduced to what the dispatcher decides on:
 * retry on the same endpoint, fail over to another, or fail the prompts. Codes come from undici and node:net.
 */
export type FailureKind =
  | 'refused' //   nothing listens: the server is down or still booting, not busy
  | 'tunnel' //    the SSH route to the endpoint is gone (forward closed, proxy unreachable)
  | 'reset' //     the connection dropped mid-exchange
  | 'tls' //       the server's certificate could not be verified (or it does not speak TLS)
  | 'timeout' //   no answer within the deadline
  | 'stalled' //   a streamed answer stopped producing tokens, or an answer took far longer than its peers'
  | 'http' //      the server answered with an error status
  | 'protocol' //  the server answered 200 with something we cannot use
  | 'cancelled'; // the caller cancelled

/** What an error body says besides its message: vLLM's `type` and `param` (nested shape only). */
export interface ServerError {
  message: string;
  type: string | null;
  param: string | null;
}

export class RequestFailure extends Error {
  /** vLLM's error `type` (`BadRequestError`, …) and `param` (`prompt`, `input_tokens`, …), when it sent them. */
  readonly errorType: string | null;
  readonly param: string | null;
  /** How long the server asked us to wait before trying again (`Retry-After`), ms. */
  readonly retryAfterMs: number | undefined;
  /** A 2xx whose body is not JSON (cut short, compressed, HTML): garbled on its way, as a reset is. */
  readonly garbled: boolean;

  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status?: number,
    detail: { type?: string | null; param?: string | null; retryAfterMs?: number; garbled?: boolean } = {},
  ) {
    // No stack: a failure is an endpoint's answer, reported by its message and never by where it was
    // noticed, and capturing one costs ~40 µs (a 10,000-endpoint swarm with most nodes down makes 20,000).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'RequestFailure';
    this.errorType = detail.type ?? null;
    this.param = detail.param ?? null;
    this.retryAfterMs = detail.retryAfterMs;
    this.garbled = detail.garbled ?? false;
  }

  /** The one conversion of anything thrown into a RequestFailure. */
  static from(err: unknown): RequestFailure {
    if (err instanceof RequestFailure) return err;
    return new RequestFailure('protocol', err instanceof Error ? err.message : String(err));
  }

  /** Worth another attempt on the same endpoint after a backoff: resets, overload and gateway errors. */
  get retryable(): boolean {
    if (this.kind === 'reset' || this.kind === 'refused' || this.kind === 'tunnel') return true;
    return this.kind === 'http' && (this.status === 429 || this.status === 502 || this.status === 503 || this.status === 504);
  }

  /**
   * The endpoint (or its route) is at fault, not the prompt: its unanswered prompts may go to
   * another endpoint. 4xx other than 408/413/429 are the prompt's fault; a 200 whose choices we
   * cannot use would read the same anywhere (a garbled body is a `reset`).
   */
  get endpointFault(): boolean {
    // A redirect (3xx, not followed) is the endpoint's or its proxy's doing, as a 413 body cap is when no split helps;
    // a refused key (401, 403) refuses every prompt alike.
    if (this.kind === 'http') return this.status === undefined || this.status < 400 || this.status >= 500 || this.status === 408 || this.status === 413 || this.status === 429 || this.denied;
    return this.kind !== 'protocol' && this.kind !== 'cancelled';
  }

  /** The endpoint itself is gone (nothing listens, or the route is cut), not merely sick. */
  get endpointDown(): boolean {
    return this.kind === 'refused' || this.kind === 'reset' || this.kind === 'tunnel';
  }

  /** The service refused our credentials (401, 403). */
  get denied(): boolean {
    return this.kind === 'http' && (this.status === 401 || this.status === 403);
  }

  /**
   * Nothing will change until the user does: a refused key, a certificate that cannot be verified.
   * Such an endpoint is benched for good, never probed again: retrying a refused key is how accounts get locked.
   */
  get permanent(): boolean {
    return this.denied || this.kind === 'tls';
  }

  /** The server has no such route (FastAPI's bare 404 or 405; vLLM's own 404 for an unknown model names its type). */
  get routeMissing(): boolean {
    return this.kind === 'http' && (this.status === 405 || (this.status === 404 && this.errorType === null));
  }

  /** A client error about the request's content (a prompt too long, a bad field). */
  get promptFault(): boolean {
    return this.kind === 'http' && !this.endpointFault;
  }
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED', 'UND_ERR_CLOSED']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const REFUSED_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** OpenSSL's verification failures (node:tls), and a plain-http server on an https URL. */
const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_REVOKED', 'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG',
]);

/** What our own deadlines were when an exchange failed, so a timeout names the one that fired. */
export interface Deadlines {
  requestMs: number;
  connectMs: number;
}

/**
 * Maps a thrown error to a RequestFailure; `timedOut` tells our own deadline from a user cancel.
 * Through an SSH forward, a refused connection means the forward is gone, not the endpoint.
 */
export function toFailure(err: unknown, timedOut: boolean, deadlines: Deadlines, viaForward = false): RequestFailure {
  if (err instanceof RequestFailure) return err;
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'ETUNNEL') return new RequestFailure('tunnel', `tunnel down: ${message}`);
  if (code === 'ECONNREFUSED' && viaForward) return new RequestFailure('tunnel', `tunnel down: ${message}`);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new RequestFailure('timeout', `no connection within ${seconds(deadlines.connectMs)} (${code})`);
  }
  if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new RequestFailure('timeout', `timed out after ${seconds(deadlines.requestMs)} (${code ?? 'deadline'})`);
  }
  if (code === 'UND_ERR_ABORTED' || (err instanceof Error && err.name === 'AbortError')) {
    return new RequestFailure('cancelled', 'cancelled');
  }
  if (code !== undefined && TLS_CODES.has(code)) return new RequestFailure('tls', `TLS: ${code}: ${message} (if a site CA signed it, trust that CA: swarm --ca-file FILE, or NODE_EXTRA_CA_CERTS)`);
  if (code !== undefined && REFUSED_CODES.has(code)) return new RequestFailure('refused', `${code}: ${message}`);
  if (code !== undefined && RESET_CODES.has(code)) return new RequestFailure('reset', `${code}: ${message}`);
  return new RequestFailure('protocol', code ? `${code}: ${message}` : message);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function errorCode(err: unknown): string | undefined {
  // undici wraps socket errors; the useful code may sit on the cause.
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
  }
  return undefined;
}

/** A non-2xx answer as a RequestFailure carrying the server's message, type and param, and its `Retry-After`. */
export function httpFailure(status: number, body: string, retryAfter?: string | string[]): RequestFailure {
  const e = serverError(status, body);
  const wait = retryAfterMs(retryAfter);
  return new RequestFailure('http', e.message, status, wait === undefined ? e : { ...e, retryAfterMs: wait });
}

/** `Retry-After` as seconds or an HTTP date, in ms from now; at most a minute (a server's "come back tomorrow" is a failure). */
function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) && ms >= 0 && ms <= 60_000 ? ms : undefined;
}

/**
 * A vLLM error body in either shape: nested `{"error":{"message","type","param"}}` (≥ v0.10.1)
 * or flat `{"object":"error","message"}` (older), falling back to FastAPI's `detail` or the raw text.
 */
export function serverError(status: number, body: string): ServerError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const text = body.trim().slice(0, 300);
    return { message: text ? `HTTP ${status}: ${text}` : `HTTP ${status}`, type: null, param: null };
  }
  const obj = (parsed ?? {}) as Record<string, unknown>;
  const nested = obj.error as Record<string, unknown> | string | undefined;
  const inner = typeof nested === 'object' && nested !== null ? nested : obj;
  const message =
    (typeof inner.message === 'string' && inner.message) ||
    (typeof nested === 'string' && nested) ||
    (typeof obj.detail === 'string' && obj.detail) ||
    '';
  return {
    message: message ? `HTTP ${status}: ${message}` : `HTTP ${status}`,
    type: typeof inner.type === 'string' ? inner.type : null,
    param: typeof inner.param === 'string' ? inner.param : null,
  };
}

/** The message alone, for callers that only report it. */
export function serverErrorMessage(status: number, body: string): string {
  return serverError(status, body).message;
}
