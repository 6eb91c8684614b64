/**
 * The generation parameters every run sends (model, max_tokens, temperature, top_p, seed, stop, n,
 * a system prompt, extra request fields), defined once: their names, their limits and how a set of
 * them is checked and copied. The CLI's flags and help, the host's message validation, the panel's
 * form, a run's recorded context and "request sent" all derive from this file.
 *
 * The limits are vLLM's own, so a value we accept is one the server accepts:
 * `vllm/sampling_params.py` `_verify_args` (temperature in [0, 2], top_p in (0, 1], max_tokens ≥ 1,
 * n from 1 to VLLM_MAX_N_SEQUENCES = 16,384, no empty stop string, n = 1 when greedy) and the
 * OpenAI server's protocol (seed an int64; here the integers a JSON number carries exactly).
 *
 * A plain table rather than a schema library: the facts are five numeric ranges and three lists,
 * and the same table also writes the CLI's help and the form's hints, which a library would not.
 * It imports nothing, so the webview bundle carries a few hundred bytes of it.
 */

export interface NumberLimit {
  /** The request field, vLLM's name for it. */
  readonly wire: string;
  readonly integer: boolean;
  readonly min: number;
  /** The minimum itself is refused (top_p must be above 0). */
  readonly minExclusive?: boolean;
  readonly max?: number;
}

export const LIMITS = {
  maxTokens: { wire: 'max_tokens', integer: true, min: 1 },
  temperature: { wire: 'temperature', integer: false, min: 0, max: 2 },
  topP: { wire: 'top_p', integer: false, min: 0, minExclusive: true, max: 1 },
  seed: { wire: 'seed', integer: true, min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER },
  n: { wire: 'n', integer: true, min: 1, max: 16_384 },
} as const satisfies Record<string, NumberLimit>;

export type NumericParam = keyof typeof LIMITS;

/** What a run asks of every request; unset fields are the server's defaults. */
export interface GenerationParams {
  /** Empty: the first model the endpoints serve. */
  model?: string;
  /** Unset: sized from the endpoint's max_model_len with Aurora-Swarm's formula. */
  maxTokens?: number;
  /** Chat path only (a batch prepends it to each prompt). */
  system?: string;
  temperature?: number;
  topP?: number;
  seed?: number;
  stop?: string[];
  n?: number;
  /** Any other vLLM request field (`reasoning_effort`, `cache_salt`, …); never one of RESERVED_FIELDS. */
  extra?: Record<string, unknown>;
}

/** How many rounds a batched-vs-individual comparison may ask for (the panel's form and the host alike). */
export const COMPARE_ROUNDS = { min: 1, max: 50 } as const;

const show = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 3 });
const unbounded = (l: NumberLimit) => l.min <= Number.MIN_SAFE_INTEGER && (l.max ?? Infinity) >= Number.MAX_SAFE_INTEGER;

/** "a number from 0 to 2", "a whole number of at least 1", "a number above 0, at most 1". */
export function rangeText(l: NumberLimit): string {
  const kind = l.integer ? 'a whole number' : 'a number';
  if (unbounded(l)) return kind;
  if (l.minExclusive) return `${kind} above ${show(l.min)}${l.max === undefined ? '' : `, at most ${show(l.max)}`}`;
  return l.max === undefined ? `${kind} of at least ${show(l.min)}` : `${kind} from ${show(l.min)} to ${show(l.max)}`;
}

export function withinLimit(l: NumberLimit, v: unknown): v is number {
  return (
    typeof v === 'number' &&
    (l.integer ? Number.isSafeInteger(v) : Number.isFinite(v)) &&
    (l.minExclusive ? v > l.min : v >= l.min) &&
    (l.max === undefined || v <= l.max)
  );
}

/** Null when `v` is within the parameter's limits, else `<label> must be <range>`. */
export function limitProblem(name: NumericParam, v: unknown, label: string = LIMITS[name].wire): string | null {
  return withinLimit(LIMITS[name], v) ? null : `${label} must be ${rangeText(LIMITS[name])}`;
}

/** A form's or a flag's text as the number it says (NaN when it says none). */
export function numberText(text: string): number {
  return text.trim() === '' ? NaN : Number(text);
}

/** Request fields the pool owns; an `extra` field must not silently replace them. */
export const RESERVED_FIELDS = new Set(['model', 'prompt', 'messages', 'max_tokens', 'stream', 'n']);

export function extraProblem(extra: Record<string, unknown> | undefined): string | null {
  const clash = Object.keys(extra ?? {}).filter((k) => RESERVED_FIELDS.has(k));
  return clash.length ? `extra request field(s) ${clash.join(', ')} are set by Swarm Lab itself; use the matching option` : null;
}

export function checkExtra(extra: Record<string, unknown> | undefined): void {
  const problem = extraProblem(extra);
  if (problem) throw new Error(problem);
}

/** Problems across fields: vLLM refuses several choices of a greedy (temperature 0) sampling. */
export function combinationProblem(p: Pick<GenerationParams, 'temperature' | 'n' | 'stop'>): string | null {
  if (p.stop?.some((s) => s === '')) return 'a stop string cannot be empty';
  if (p.temperature === 0 && p.n !== undefined && p.n > 1) return 'n must be 1 when temperature is 0 (greedy sampling has one answer)';
  return null;
}

/** The set fields of `p` and nothing else: no empty model, system prompt or stop list, no undefined. */
export function generationParams(p: GenerationParams): GenerationParams {
  const out: GenerationParams = {};
  if (p.model) out.model = p.model;
  if (p.maxTokens !== undefined) out.maxTokens = p.maxTokens;
  if (p.system) out.system = p.system;
  if (p.temperature !== undefined) out.temperature = p.temperature;
  if (p.topP !== undefined) out.topP = p.topP;
  if (p.seed !== undefined) out.seed = p.seed;
  if (p.stop?.length) out.stop = p.stop;
  if (p.n !== undefined) out.n = p.n;
  if (p.extra && Object.keys(p.extra).length) out.extra = p.extra;
  return out;
}

const NUMERIC = Object.keys(LIMITS) as NumericParam[];
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks untrusted parameters (a webview message, a file) and returns them with nothing else carried
 * over; throws one clear message. `null` and `''` read as unset, as a cleared form field sends them.
 */
export function parseGenerationParams(r: Record<string, unknown>): GenerationParams {
  const out: GenerationParams = {};
  const set = (v: unknown) => v !== undefined && v !== null && v !== '';
  if (set(r.model)) {
    if (typeof r.model !== 'string') throw new Error('model must be a string');
    out.model = r.model;
  }
  if (set(r.system)) {
    if (typeof r.system !== 'string') throw new Error('system must be a string');
    out.system = r.system;
  }
  for (const name of NUMERIC) {
    if (!set(r[name])) continue;
    const problem = limitProblem(name, r[name]);
    if (problem) throw new Error(problem);
    out[name] = r[name] as number;
  }
  if (set(r.stop)) {
    if (!Array.isArray(r.stop) || r.stop.some((s) => typeof s !== 'string')) throw new Error('stop must be a list of strings');
    if (r.stop.length) out.stop = r.stop as string[];
  }
  if (set(r.extra)) {
    if (!isRecord(r.extra)) throw new Error('extra must be an object');
    checkExtra(r.extra);
    out.extra = r.extra;
  }
  const problem = combinationProblem(out);
  if (problem) throw new Error(problem);
  return out;
}
