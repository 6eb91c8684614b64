import { basename } from 'node:path';
import { startSimCluster, type SimCluster } from '../cluster.ts';
import type { SimOptions } from '../options.ts';
import { LlamaBackend } from './backend.ts';
import { tinyModelFile } from './model-file.ts';
import { loadModel } from './runtime.ts';
import { TINY_CONTEXT } from './tiny-gguf.ts';

export interface LlamaClusterOptions {
  /** A GGUF file; default: the project's tiny model, generated into the cache on first use. */
  modelFile?: string;
  /** Sequences each endpoint decodes together (llama.cpp's parallel sequences); the rest queue. */
  parallel: number;
  /** llama.cpp threads for the whole process. */
  threads: number;
  /** Tokens per sequence; default: the model's training context, at most 4,096. */
  contextSize?: number;
}

/** The tiny model's served name. */
export const TINY_MODEL = 'swarm-lab-tiny';

/**
 * `count` endpoints of real llama.cpp inference over one loaded model, each with its own context;
 * served as `options.model`, else the tiny model's name or the GGUF file's.
 */
export async function startLlamaCluster(count: number, options: Partial<SimOptions>, llama: LlamaClusterOptions, firstPort = 0): Promise<SimCluster> {
  const file = llama.modelFile ?? (await tinyModelFile());
  const model = await loadModel(file, llama.threads);
  const contextSize = llama.contextSize ?? Math.min(model.trainContextSize || TINY_CONTEXT, 4096);
  const backends: LlamaBackend[] = [];
  try {
    for (let i = 0; i < count; i++) backends.push(await LlamaBackend.create(model, llama.parallel, contextSize));
  } catch (err) {
    await Promise.all(backends.map((b) => b.close()));
    throw err;
  }
  const served = options.model ?? (llama.modelFile ? basename(llama.modelFile).replace(/\.gguf$/i, '') : TINY_MODEL);
  return startSimCluster(count, { ...options, model: served }, firstPort, backends);
}
