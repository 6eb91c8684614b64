import { RequestFailure } from '../http/failure.ts';

/** `POST /v1/embeddings` body: vLLM takes a list of inputs; floats, so nothing needs decoding. */
export function embeddingsBody(inputs: readonly string[], model: string): Record<string, unknown> {
  return { model, input: inputs, encoding_format: 'float' };
}

/** The vectors of an embeddings response in input order (by each item's `index`); throws a protocol failure when one is missing. */
export function readEmbeddings(body: unknown, count: number): number[][] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new RequestFailure('protocol', 'embeddings response without a data list');
  const vectors = new Array<number[]>(count);
  for (const [i, item] of data.entries()) {
    const { index = i, embedding } = (item ?? {}) as { index?: number; embedding?: unknown };
    if (Array.isArray(embedding) && embedding.every((x) => typeof x === 'number') && index >= 0 && index < count) vectors[index] = embedding;
  }
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !vectors[i]);
  if (missing.length) throw new RequestFailure('protocol', `embeddings response has no vector for input(s) ${missing.slice(0, 5).join(', ')} of ${count}`);
  return vectors;
}
