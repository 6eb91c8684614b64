/**
 * What one engine step of the modeled vLLM server costs, and how much KV cache it has: a roofline
 * model of one GPU serving Llama-3.1-8B in BF16. Every figure here is MODELED, not measured on a
 * GPU; the sources of the constants are named beside them, so a reader can check or replace them.
 *
 * A step runs every scheduled token through the weights once (decode: one token per running
 * sequence; prefill: a chunk of a prompt) and reads the KV cache of every scheduled sequence:
 *
 *   step = weights ÷ (bandwidth × efficiency)              (memory-bound floor: read all weights once)
 *        + tokens × 2·params ÷ (peak FLOPs × MFU)          (compute per scheduled token)
 *        + context tokens × KV bytes ÷ (bandwidth × efficiency)   (attention reads each sequence's cache)
 */

/** The model the step costs are for: Llama-3.1-8B (config.json: 32 layers, 8 KV heads of 128 dims), BF16. */
export const MODELED_MODEL = {
  name: 'Llama-3.1-8B (BF16)',
  params: 8.03e9,
  weightBytes: 16.06e9,
  /** K and V × 32 layers × 8 KV heads × 128 dims × 2 bytes = 128 KiB per token. */
  kvBytesPerToken: 2 * 32 * 8 * 128 * 2,
} as const;

export interface GpuSpec {
  /** vLLM's device name test: "a100" never gets the large-GPU defaults (PR #17885). */
  name: string;
  memoryGb: number;
  /** HBM bandwidth, bytes/s (vendor datasheets). */
  bandwidth: number;
  /** Dense BF16 peak, FLOP/s (vendor datasheets). */
  flops: number;
}

/** Datasheet figures: NVIDIA H100 SXM5 (80 GB, 3.35 TB/s, 989 TFLOPS), A100 SXM4 80 GB (2.04 TB/s, 312), A100 40 GB (1.555 TB/s, 312), L40S (48 GB, 0.864 TB/s, 362). */
export const GPUS: Readonly<Record<string, GpuSpec>> = {
  h100: { name: 'H100 80GB', memoryGb: 80, bandwidth: 3.35e12, flops: 989e12 },
  'a100-80gb': { name: 'A100 80GB', memoryGb: 80, bandwidth: 2.04e12, flops: 312e12 },
  'a100-40gb': { name: 'A100 40GB', memoryGb: 40, bandwidth: 1.555e12, flops: 312e12 },
  l40s: { name: 'L40S', memoryGb: 48, bandwidth: 0.864e12, flops: 362e12 },
};

/**
 * Share of peak HBM bandwidth a decode step achieves: 77 %, as measured for Llama-3.1-8B BF16 on one
 * A100 40 GB with vLLM 0.23 (single-stream decode ≈ 75 tokens/s, "vLLM throughput-latency sweep on
 * NVIDIA A100", johnmusgrave.com). With it the model gives 13.4 ms per token there, 6.2 ms on an H100.
 */
export const BANDWIDTH_EFFICIENCY = 0.77;
/** Model FLOPs utilisation of prefill and batched decode: an assumption (50 %), typical of dense BF16 GEMMs; ~31,000 prompt tokens/s on an H100. */
export const MFU = 0.5;
/** vLLM's `--gpu-memory-utilization` default. */
export const GPU_MEMORY_UTILIZATION = 0.9;
/**
 * Activations, CUDA graphs and the sampler: memory vLLM's profiling run keeps off the KV cache (an
 * assumption, 2 GB). Check: 94 GB × 0.9 − 16.06 − 2 → 507,000 tokens for an H100 NVL, against the
 * 543,440 vLLM reports for Llama-3-8B there (a public table of measured capacities) — within 7 %.
 */
export const RESERVED_BYTES = 2e9;
/** vLLM's KV block size (`--block-size` default on CUDA). */
export const BLOCK_SIZE = 16;

export interface StepCosts {
  /** ms per step whatever it holds. */
  baseMs: number;
  /** ms per scheduled token (prompt or output). */
  perTokenMs: number;
  /** ms per token of KV cache the scheduled sequences read. */
  perContextTokenMs: number;
}

/** The modeled step costs on `gpu`. */
export function stepCosts(gpu: GpuSpec): StepCosts {
  const bandwidth = gpu.bandwidth * BANDWIDTH_EFFICIENCY;
  return {
    baseMs: (MODELED_MODEL.weightBytes / bandwidth) * 1000,
    perTokenMs: ((2 * MODELED_MODEL.params) / (gpu.flops * MFU)) * 1000,
    perContextTokenMs: (MODELED_MODEL.kvBytesPerToken / bandwidth) * 1000,
  };
}

/** Modeled KV-cache capacity in tokens: what the GPU's memory holds once the weights and the reserve are in, as vLLM sizes it. */
export function kvCacheTokens(memoryGb: number): number {
  const free = memoryGb * 1e9 * GPU_MEMORY_UTILIZATION - MODELED_MODEL.weightBytes - RESERVED_BYTES;
  return Math.max(BLOCK_SIZE, Math.floor(free / MODELED_MODEL.kvBytesPerToken));
}

/** One step's duration, ms, for `tokens` scheduled tokens over sequences holding `contextTokens` of cache. */
export function stepMs(costs: StepCosts, tokens: number, contextTokens: number): number {
  return costs.baseMs + tokens * costs.perTokenMs + contextTokens * costs.perContextTokenMs;
}

/**
 * vLLM's defaults for `--max-num-seqs` and `--max-num-batched-tokens` of `vllm serve`, by release and GPU
 * (vllm/engine/arg_utils.py): V0 and releases to 0.8.4 use 256 sequences (V1 started at 1024 and PR
 * #16158 reverted it to 256 in April 2025 after OOM reports); from 0.8.5 GPUs with ≥ 70 GiB that are
 * not an A100 get 1024 (PR #17073; A100 excluded by PR #17885). The API server's token budget is 2048,
 * 8192 on those large GPUs (PR #12369, 0.7.1).
 */
export function batchDefaults(version: readonly number[], gpu: GpuSpec): { maxNumSeqs: number; maxNumBatchedTokens: number } {
  const atLeast = (...min: number[]): boolean => {
    for (let i = 0; i < 3; i++) if ((version[i] ?? 0) !== (min[i] ?? 0)) return (version[i] ?? 0) > (min[i] ?? 0);
    return true;
  };
  const large = gpu.memoryGb * 1e9 >= 70 * 2 ** 30 && !gpu.name.toLowerCase().includes('a100');
  return {
    maxNumSeqs: large && atLeast(0, 8, 5) ? 1024 : 256,
    maxNumBatchedTokens: large && atLeast(0, 7, 1) ? 8192 : 2048,
  };
}
