/**
 * What changes between vLLM releases in what a client sees (protocol notes §2.6, §2.7, §7, §8). Each
 * field is the behaviour of the given version; sources in the comments.
 */
export interface VersionProfile {
  /** What GET /version answers. */
  version: string;
  /** Where a reasoning model's thinking goes: `reasoning_content` to 0.11.0, both from PR #27752 to 0.15.x, `reasoning` from 0.16.0 (PR #33402). */
  reasoningField: 'reasoning' | 'reasoning_content' | 'both';
  /** Flat `object:"error"` bodies before 0.10.1, nested under `error` since (PR #22099). */
  errorFormat: 'nested' | 'flat';
  contextError: ContextError;
  /** KV-cache gauge name(s): `gpu_` before 0.9.2, both (the old one deprecated) to 0.10.x, `kv_` alone from 0.11. */
  cacheMetric: 'gpu' | 'both' | 'kv';
  /** VLLM_MAX_COMPLETION_PROMPTS' default, or undefined on versions without the cap. */
  maxPrompts: number | undefined;
  /** `POST /v1/chat/completions/batch` (PR #38011): from 0.19. */
  chatBatch: boolean;
  /** `return_token_ids` is honoured from 0.10.2 (#22587); older releases ignore the field. */
  returnTokenIds: boolean;
  /** The per-token latency histogram(s): `time_per_output_token` to 0.10, both 0.11–0.14 (#24110), `inter_token_latency` from 0.15 (#32661 removed the old). */
  tokenLatencyMetric: 'tpot' | 'both' | 'itl';
}

/**
 * The context-overflow wording: `requested` ("you requested N tokens (P in the messages, M in the
 * completion)") to 0.10.1; `too-large` ("'max_tokens' or 'max_completion_tokens' is too large")
 * 0.10.2–0.11.x; `input-tokens` (renderers/params.py, `param: "input_tokens"`) from 0.12.
 */
export type ContextError = 'requested' | 'too-large' | 'input-tokens';

/** The newest release modeled; `latest` means it, and a newer version gets this profile with a warning. */
export const LATEST_VERSION = '0.31.0';
/** CVE-2026-73559 names the releases without the prompt-list cap "from 0.19.0 until 0.26.0": the cap (PR #47845) ships in 0.26. */
const PROMPT_CAP_SINCE = [0, 26, 0];

/** The profile of `version` ("0.11.0", "0.13", "latest"); throws RangeError on anything else. */
export function versionProfile(version: string): VersionProfile {
  const v = version === 'latest' ? LATEST_VERSION : version;
  const match = /^(\d+)\.(\d+)(?:\.(\d+))?$/.exec(v);
  if (!match) throw new RangeError(`sim option vllmVersion must look like 0.11.0, 0.13 or latest, got ${version}`);
  const parts = match.slice(1).map((p) => Number(p ?? 0));
  const atLeast = (...min: number[]): boolean => compare(parts, min) >= 0;
  return {
    version: parts.join('.'),
    reasoningField: atLeast(0, 16) ? 'reasoning' : atLeast(0, 11, 1) ? 'both' : 'reasoning_content',
    errorFormat: atLeast(0, 10, 1) ? 'nested' : 'flat',
    contextError: atLeast(0, 12) ? 'input-tokens' : atLeast(0, 10, 2) ? 'too-large' : 'requested',
    cacheMetric: atLeast(0, 11) ? 'kv' : atLeast(0, 9, 2) ? 'both' : 'gpu',
    maxPrompts: atLeast(...PROMPT_CAP_SINCE) ? 1024 : undefined,
    chatBatch: atLeast(0, 19),
    returnTokenIds: atLeast(0, 10, 2),
    tokenLatencyMetric: atLeast(0, 15) ? 'itl' : atLeast(0, 11) ? 'both' : 'tpot',
  };
}

/** Whether `version` is newer than any release modeled (its behaviour is then a guess). */
export function newerThanModeled(version: string): boolean {
  const match = /^(\d+)\.(\d+)(?:\.(\d+))?$/.exec(version);
  return match !== null && compare(match.slice(1).map((p) => Number(p ?? 0)), LATEST_VERSION.split('.').map(Number)) > 0;
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}
