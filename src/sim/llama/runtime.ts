import type { LlamaModel } from 'node-llama-cpp';

const loaded = new Map<string, Promise<LlamaModel>>();

/**
 * The model in `file`, loaded once per process and shared by every endpoint serving it. llama.cpp
 * runs on the CPU with one thread per process unless told otherwise: with more than the machine has
 * free it busy-spins while idle and decodes ~20× slower (testing-offline.md §2).
 */
export function loadModel(file: string, threads = 1): Promise<LlamaModel> {
  let model = loaded.get(file);
  if (!model) {
    model = open(file, threads);
    loaded.set(file, model);
    model.catch(() => loaded.delete(file));
  }
  return model;
}

async function open(file: string, threads: number): Promise<LlamaModel> {
  let binding: typeof import('node-llama-cpp');
  try {
    binding = await import('node-llama-cpp');
  } catch (err) {
    throw new Error(`the llama engine needs node-llama-cpp, an optional dependency of swarm-lab that is not installed here (npm install node-llama-cpp@3.21.1): ${(err as Error).message}`);
  }
  // Prebuilt CPU binaries only: never compile or download at run time.
  const llama = await binding.getLlama({ gpu: false, build: 'never', maxThreads: threads, logLevel: binding.LlamaLogLevel.error });
  try {
    return await llama.loadModel({ modelPath: file });
  } catch (err) {
    throw new Error(`cannot load ${file} as a GGUF model: ${(err as Error).message}`);
  }
}
