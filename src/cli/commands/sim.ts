import { Command, Option } from 'commander';
import { writeFile } from 'node:fs/promises';
import { endpointId, writeHostfile } from '../../core/index.ts';
import { startSimCluster } from '../../sim/cluster.ts';
import { resolveSimOptions, type SimOptions } from '../../sim/options.ts';
import type { SimServer, SimStats } from '../../sim/server.ts';
import { GPUS } from '../../sim/step-model.ts';
import { LATEST_VERSION, newerThanModeled } from '../../sim/versions.ts';
import { CliError, signalExit } from '../exit.ts';
import { printable } from '../format.ts';
import { claimStop, stopped } from '../interrupt.ts';
import { int, num } from '../options.ts';
import { checkOutPath } from '../output.ts';

/** Messages a parent process (the benchmark) exchanges with `swarm sim` over an IPC channel. */
export type SimIpcRequest = { type: 'stats' };
export type SimIpcMessage =
  | { type: 'ready'; endpoints: string[] }
  | { type: 'stats'; servers: SimStats[]; maxRssKb: number };

/** Aurora-Swarm's embeddings example asks for this model by default. */
const EMBED_MODEL = 'sentence-transformers/all-MiniLM-L6-v2';

interface SimFlags extends Partial<SimOptions> {
  endpoints: number;
  port?: number;
  hostfile?: string;
  engine: 'sim' | 'llama';
  modelFile?: string;
  parallel: number;
  threads: number;
}

export function simCommand(): Command {
  return new Command('sim')
    .usage('--endpoints N [--hostfile FILE] [options]')
    .description('run N vLLM-compatible servers on 127.0.0.1 (every flag applies to all N), simulated or (--engine llama) real llama.cpp inference; prints "ready" once all listen. With VLLM_API_KEY set, /v1/* requires it as a Bearer token, as vLLM does')
    .requiredOption('--endpoints <n>', 'number of servers', int('--endpoints', 1, 10_000))
    .option('--port <p>', 'listen on ports p … p+n-1 (default: free ports), e.g. to restart a killed sim where clients expect it', int('--port', 1, 65_535))
    .option('--hostfile <file>', 'write their hostfile here')
    .option('--model <name>', `served model name (default: sim-model, ${EMBED_MODEL} with --task embed; with --engine llama swarm-lab-tiny, or the GGUF file's name)`)
    .addOption(
      new Option('--engine <engine>', "sim: modeled timing and made-up text; llama: real inference with llama.cpp (node-llama-cpp) on the CPU — the same HTTP surface, real tokens, usage and context errors; the timing flags then do nothing")
        .choices(['sim', 'llama'])
        .default('sim'),
    )
    .option('--model-file <gguf>', "--engine llama: the GGUF model to serve (default: the project's tiny random-weight llama model, written into ~/.cache/swarm-lab on first use)")
    .option('--parallel <k>', '--engine llama: sequences each endpoint decodes together in one batch; the rest queue', int('--parallel', 1, 256), 4)
    .option('--threads <n>', '--engine llama: llama.cpp threads for the whole process (more than the free cores makes it spin and slow down)', int('--threads', 1, 256), 1)
    .addOption(new Option('--task <task>', 'generate: completions and chat; embed: a pooling model serving only /v1/embeddings (hostfile lines tagged role=embed)').choices(['generate', 'embed']).default('generate'))
    .option('--embedding-dim <d>', 'length of the embedding vectors (--task embed)', int('--embedding-dim', 1, 65_536), 384)
    .option('--max-model-len <l>', "context length in the simulated tokenizer's tokens (letters 4 to a token; every digit, mark and CJK character one: not chars/4)", int('--max-model-len', 1, 10_000_000), 8192)
    .option('--vllm-version <v>', 'behave as this vLLM release (e.g. 0.10.0, 0.15, 0.19, latest = 0.31): error bodies and context-overflow wording, reasoning fields (with --reasoning auto), KV-cache gauge and per-token histogram names, prompt-list cap (0.26+), POST /v1/chat/completions/batch (0.19+), return_token_ids (0.10.2+), GET /version; the flags below override it')
    .option('--max-prompts <k>', "prompt-list cap (vLLM's VLLM_MAX_COMPLETION_PROMPTS; default 1024, none on versions before the cap)", int('--max-prompts', 1, 1_000_000))
    .option('--stream-interval <k>', "output tokens per streamed delta (vLLM's --stream-interval): clients must count tokens from usage, not deltas", int('--stream-interval', 1, 1_000_000), 1)
    .option('--max-num-seqs <k>', "sequences running at once per engine; the rest queue (default 256; with --scheduler vllm, vLLM's default for --vllm-version and --gpu: 1024 on an H100 from 0.8.5)", int('--max-num-seqs', 1, 65_536))
    .addOption(
      new Option('--scheduler <model>', "fixed: a sequence holds a slot for ttft + tokens × tpot, whatever its prompt; vllm: vLLM V1's scheduler modeled step by step on a modeled GPU (KV cache in 16-token blocks, chunked prefill, decode slowing with batch and context, preemption by recompute, prefix caching; ttft/tpot then unused, --slow-factor scales steps). Implied by --gpu, --kv-cache-tokens or --max-num-batched-tokens")
        .choices(['fixed', 'vllm']),
    )
    .addOption(new Option('--gpu <gpu>', 'the modeled GPU serving a modeled Llama-3.1-8B in BF16 (--scheduler vllm): step costs from its datasheet bandwidth and FLOPs, KV capacity from its memory (default h100)').choices(Object.keys(GPUS)))
    .option('--kv-cache-tokens <n>', "KV-cache capacity per engine, tokens (--scheduler vllm; default: what the modeled GPU's memory holds after the weights, e.g. 411,000 on an H100); at least --max-model-len, as vLLM requires", int('--kv-cache-tokens', 16, 1_000_000_000))
    .option('--max-num-batched-tokens <n>', "tokens one engine step computes, prompt chunks and decode tokens together (--scheduler vllm; default vLLM's: 8192 on an H100, 2048 on smaller GPUs)", int('--max-num-batched-tokens', 1, 10_000_000))
    .option('--no-enable-prefix-caching', 'turn off the prefix cache (--scheduler vllm; on by default, as in vLLM V1)')
    .option('--data-parallel <k>', "engines per server (vLLM's --data-parallel-size): each has --max-num-seqs slots and its own engine=\"i\" gauges in /metrics", int('--data-parallel', 1, 64), 1)
    .option('--request-overhead-ms <x>', 'serialized cost of each HTTP request at the server front end', num('--request-overhead-ms', 0, 60_000), 2)
    .option('--ttft-ms <x>', 'time to first token per sequence', num('--ttft-ms', 0, 600_000), 20)
    .option('--tpot-ms <x>', 'time per output token per sequence', num('--tpot-ms', 0, 60_000), 1)
    .addOption(new Option('--reply <mode>', 'echo: "completion: <prompt>"; lorem: words, seeded unless a request samples (temperature > 0 without seed)').choices(['echo', 'lorem']).default('echo'))
    .addOption(new Option('--chat-template <format>', "chatml; llama3 (strips each message's content, as Llama 3's template does); or harmony as gpt-oss (chat answers with reasoning; raw completions of a rendered conversation answer in harmony channels)").choices(['chatml', 'llama3', 'harmony']).default('chatml'))
    .option('--answer-tokens <median>', 'lorem answers stop at a sampled end-of-sequence around this many tokens, as a model stops when done (default: 128; ignore_eos fills max_tokens)', int('--answer-tokens', 1, 10_000_000))
    .addOption(
      new Option('--reasoning <field>', "act as a reasoning model, reasoning text in this field (chat): reasoning_content (vLLM ≤0.11.0), both (to 0.15), reasoning (0.16+), auto (--vllm-version's)")
        .choices(['none', 'auto', 'reasoning', 'reasoning_content', 'both'])
        .default('none'),
    )
    .option('--seed <s>', 'seed of every random choice', int('--seed', 0, 4_294_967_295), 0)
    .option('--fault-rate <p>', 'share of generation requests answered with --fault-status', num('--fault-rate', 0, 1), 0)
    .option('--fault-status <code>', 'status of faulty answers', int('--fault-status', 400, 599), 500)
    .option('--fault-after <n>', 'faults start after this many generation requests per server', int('--fault-after', 0, 1_000_000_000), 0)
    .option('--die-after <n>', 'after n generation requests every connection is reset', int('--die-after', 0, 1_000_000_000))
    .option('--hang', 'accept generation requests and never answer')
    .option('--stall-after-chunks <k>', 'streamed answers go silent after k SSE events, connection left open', int('--stall-after-chunks', 0, 1_000_000_000))
    .option('--drop-after-chunks <k>', 'streamed answers lose their connection after k SSE events', int('--drop-after-chunks', 0, 1_000_000_000))
    .option('--slow-factor <x>', 'multiply ttft and tpot', num('--slow-factor', 0, 1_000), 1)
    .option('--health-status <code>', 'status of GET /health', int('--health-status', 100, 599), 200)
    .option('--boot-ms <t>', 'refuse connections for this long after start, as a loading vLLM does', int('--boot-ms', 0, 3_600_000), 0)
    .option('--shuffle-choices', 'return choices out of array order (indices stay right)')
    .addOption(new Option('--error-format <shape>', 'error body: nested (vLLM ≥0.10.1, the default) or flat (older)').choices(['nested', 'flat']))
    .action(async (flags: SimFlags) => {
      const { endpoints: count, port, hostfile, engine, modelFile, parallel, threads, ...options } = flags;
      if (engine === 'llama' && options.task === 'embed') throw new CliError('--engine llama serves generation only; --task embed is the simulated engine');
      // Like `vllm serve`, the key comes from VLLM_API_KEY (kept out of shell history and `ps`).
      if (process.env.VLLM_API_KEY) options.apiKey = process.env.VLLM_API_KEY;
      const stop = claimStop();
      if (options.vllmVersion && newerThanModeled(options.vllmVersion)) {
        process.stderr.write(`warning: vLLM ${printable(options.vllmVersion)} is newer than the newest release modeled (${LATEST_VERSION}); behaving as ${LATEST_VERSION}\n`);
      }
      if (hostfile) await checkOutPath(hostfile, [], '--hostfile');
      if (engine === 'sim') options.model ??= options.task === 'embed' ? EMBED_MODEL : 'sim-model';
      const simOptions = { ...options, hang: Boolean(options.hang), shuffleChoices: Boolean(options.shuffleChoices) };
      // Flags that are each in range but do not fit together (a KV cache smaller than one sequence) are bad input too.
      try {
        resolveSimOptions(simOptions);
      } catch (err) {
        if (err instanceof RangeError) throw new CliError(err.message);
        throw err;
      }
      const cluster =
        engine === 'llama'
          ? await (await import('../../sim/llama/cluster.ts')).startLlamaCluster(count, simOptions, { modelFile, parallel, threads }, port).catch((err: Error) => {
              throw new CliError(`--engine llama: ${err.message}`);
            })
          : await startSimCluster(count, simOptions, port);
      // Tagged as Aurora-Swarm's embeddings example selects its servers (--role embed).
      const lines = options.task === 'embed' ? cluster.endpoints.map((e) => ({ ...e, tags: { role: 'embed' } })) : cluster.endpoints;
      try {
        if (hostfile) await writeFile(hostfile, writeHostfile(lines));
      } catch (err) {
        await cluster.close();
        throw new CliError(`--hostfile ${printable(hostfile!)}: cannot write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      }
      const ids = cluster.endpoints.map(endpointId);
      process.stdout.write(`ready: ${count} ${engine === 'llama' ? 'llama.cpp' : 'simulated'} vLLM server(s) serving ${cluster.servers[0]!.model} on ${ids.length > 4 ? `${ids.slice(0, 3).join(', ')}, … ${ids.at(-1)}` : ids.join(', ')}${hostfile ? `; hostfile ${hostfile}` : ''}\n`);
      answerIpc(cluster.servers, ids);
      await Promise.race([stopped(stop), new Promise((resolve) => process.once('disconnect', resolve))]);
      await cluster.close();
      process.disconnect?.();
      // Stopped by a signal: its code, as every command's (a parent that went away is a normal end).
      if (stop.by()) process.exitCode = signalExit(stop.by()!);
    });
}

/** Under a parent's IPC channel (the benchmark), report readiness and answer stats requests. */
function answerIpc(servers: readonly SimServer[], ids: string[]): void {
  if (!process.send) return;
  const send = (m: SimIpcMessage) => process.send!(m);
  send({ type: 'ready', endpoints: ids });
  process.on('message', (m: SimIpcRequest) => {
    if (m.type === 'stats') send({ type: 'stats', servers: servers.map((s) => s.stats()), maxRssKb: process.resourceUsage().maxRSS });
  });
}
