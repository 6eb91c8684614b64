import type { ServerResponse } from 'node:http';
import type { EngineGauges, Metrics } from './metrics.ts';
import type { SimOptions } from './options.ts';
import type { Body } from './validation.ts';

/** What a backend gets of its server: the live options (faults set at runtime included) and the counters. */
export interface BackendContext {
  readonly options: SimOptions;
  readonly metrics: Metrics;
}

/**
 * Real inference behind the simulator's HTTP surface: the server keeps routing, auth, faults,
 * health and /metrics; the backend answers generation, /tokenize and /detokenize with its model.
 */
export interface InferenceBackend {
  /** Tokens per sequence, reported as /v1/models' max_model_len. */
  readonly maxModelLen: number;
  /** Answers `/v1/completions` or `/v1/chat/completions`; throws SimError before it has written anything. */
  serve(path: string, body: Body, res: ServerResponse, ctx: BackendContext): Promise<void>;
  tokenize(body: Body, options: SimOptions): object;
  detokenize(body: Body, options: SimOptions): object;
  gauges(): EngineGauges[];
  close(): Promise<void>;
}
