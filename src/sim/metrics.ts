import type { SimOptions } from './options.ts';
import { outputTokens, type FinishReason, type Output } from './replies.ts';

/** Live gauges the engine reports at scrape time. */
export interface EngineGauges {
  running: number;
  waiting: number;
  capacity: number;
}

// vLLM's instrumentator leaves these out of http_requests_total.
const UNINSTRUMENTED = new Set(['/metrics', '/health']);

/** Counters of one server, exposed both as SimStats and as vLLM-style Prometheus text. */
export class Metrics {
  promptsReceived = 0;
  promptTokens = 0;
  private generationTokens = 0;
  private readonly finished: Record<FinishReason, number> = { stop: 0, length: 0 };
  /** Keyed `${method} ${path} ${status}`. */
  private readonly http = new Map<string, number>();

  constructor(
    private readonly model: string,
    private readonly knownPaths: ReadonlySet<string>,
  ) {}

  recordHttp(method: string, path: string, status: number): void {
    const key = `${method} ${path} ${status}`;
    this.http.set(key, (this.http.get(key) ?? 0) + 1);
  }

  sequenceFinished(output: Output): void {
    this.generationTokens += outputTokens(output);
    this.finished[output.finishReason]++;
  }

  httpRequests(): Record<string, number> {
    return Object.fromEntries(this.http);
  }

  render(gauges: EngineGauges, cacheMetric: SimOptions['cacheMetric']): string {
    const model = { engine: '0', model_name: this.model };
    const lines: string[] = [];
    const family = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[Record<string, string>, number]>): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labelText(labels)} ${numberText(value)}`);
    };
    family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', [[model, gauges.running]]);
    family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', [[model, gauges.waiting]]);
    const usage: Array<[Record<string, string>, number]> = [[model, gauges.running / gauges.capacity]];
    // Renamed in PR #18354: both names until 0.10.x (the old one deprecated), only kv_ from 0.11.
    if (cacheMetric !== 'kv') family('vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage.', usage);
    if (cacheMetric !== 'gpu') family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', usage);
    family('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', [[model, this.promptTokens]]);
    family('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', [[model, this.generationTokens]]);
    family(
      'vllm:request_success_total',
      'counter',
      'Count of successfully processed requests.',
      Object.entries(this.finished).map(([reason, count]) => [{ ...model, finished_reason: reason }, count]),
    );
    family('http_requests_total', 'counter', 'Total number of requests by method, status and handler.', [...this.instrumented().values()]);
    return lines.join('\n') + '\n';
  }

  /** http_requests_total as prometheus-fastapi-instrumentator groups it: status class, unmatched paths as handler "none". */
  private instrumented(): Map<string, [Record<string, string>, number]> {
    const samples = new Map<string, [Record<string, string>, number]>();
    for (const [key, count] of this.http) {
      const [method, path, status] = key.split(' ') as [string, string, string];
      if (UNINSTRUMENTED.has(path)) continue;
      const labels = { handler: this.knownPaths.has(path) ? path : 'none', method, status: `${status[0]}xx` };
      const id = labelText(labels);
      samples.set(id, [labels, (samples.get(id)?.[1] ?? 0) + count]);
    }
    return samples;
  }
}

function labelText(labels: Record<string, string>): string {
  const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
  return `{${Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`).join(',')}}`;
}

/** Python's prometheus_client prints floats: `3.0`, `0.25`. */
function numberText(value: number): string {
  return Number.isInteger(value) ? value.toFixed(1) : String(value);
}
