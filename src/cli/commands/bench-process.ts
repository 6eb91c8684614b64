import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { childEnv } from '../../core/index.ts';

/** What a `swarm` child process cost, as it measured itself. */
export interface ProcessCost {
  wallMs: number;
  /** CPU (user + system) from exec to its first HTTP request: node, the bundle, options, reading the prompts. */
  startupCpuMs: number;
  /** CPU from the first HTTP request to exit: the run, the results file, the teardown. */
  runCpuMs: number;
  maxRssKb: number;
}

/**
 * Loaded into the child before the CLI: notes the CPU spent when undici creates its first request,
 * and at exit writes that, the total and the peak RSS to fd 3. Only the first request is watched.
 */
const PROBE = `
import dc from 'node:diagnostics_channel';
import { writeSync } from 'node:fs';
let startup;
const first = () => {
  startup ??= process.cpuUsage();
  queueMicrotask(() => dc.unsubscribe('undici:request:create', first));
};
dc.subscribe('undici:request:create', first);
process.on('exit', () => writeSync(3, JSON.stringify({ startup: startup ?? process.cpuUsage(), total: process.cpuUsage(), maxRssKb: process.resourceUsage().maxRSS })));
`;

/** Runs `swarm ARGS` (this very CLI) as a child process and returns what it cost; it must exit 0. */
export async function measureSwarm(args: readonly string[]): Promise<ProcessCost> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [`--import=data:text/javascript,${encodeURIComponent(PROBE)}`, process.argv[1]!, ...args], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    env: childEnv(),
  });
  const stderr: Buffer[] = [];
  const report: Buffer[] = [];
  child.stderr!.on('data', (b: Buffer) => stderr.push(b));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (b: Buffer) => report.push(b));
  const [code] = (await once(child, 'close')) as [number | null];
  const wallMs = performance.now() - t0;
  if (code !== 0) throw new Error(`swarm ${args[0]} exited ${code}: ${Buffer.concat(stderr).toString().trim().split('\n').at(-1)}`);
  const r = JSON.parse(Buffer.concat(report).toString()) as { startup: NodeJS.CpuUsage; total: NodeJS.CpuUsage; maxRssKb: number };
  const ms = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  return { wallMs, startupCpuMs: ms(r.startup), runCpuMs: ms(r.total) - ms(r.startup), maxRssKb: r.maxRssKb };
}

/** CPU (user + system) a process has used so far, from /proc; 0 where there is no /proc. */
export function procCpuMs(pid: number): number {
  try {
    // Fields after the parenthesised command name: state is the 1st, utime the 12th, stime the 13th (clock ticks, 100 Hz on Linux).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
