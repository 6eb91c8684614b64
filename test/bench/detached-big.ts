// Issue 23's big evidence: a detached run of N prompts (default 100,000) on a login node that is a
// real sshd on loopback, over a hostfile of several `swarm sim` processes, that outlives a client
// killed with SIGKILL and its ssh master killed with SIGKILL (and the sshd with its sessions), is
// attached again through a new login, and ends with its results copied here. The copy is then read
// row by row: N rows, index i on line i, each carrying prompt i, all ok; and the servers' own
// request counters are read against N. test/detached-runs.test.ts does the same at 600 prompts.
// Run: `npm run build && nice -n 10 node --import tsx test/bench/detached-big.ts [N] [concurrency] [individual|batched]`.
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureBuilt, finished, killAll, requestCounts, runCli, spawnCli, startSim, tempDir, type Sim } from '../helpers/cli.ts';
import { until } from '../helpers/patience.ts';
import { haveSshd, masters, TestSshd } from '../helpers/sshd.ts';

const n = Number(process.argv[2] ?? 100_000);
const concurrency = Number(process.argv[3] ?? 64);
/** Individual requests (the default: a row per request) or the CLI's default, batches. */
const batched = process.argv[4] === 'batched';
/** Two `swarm sim` processes of this many servers each. */
const PER_SIM = 4;

/** As the test's: control characters, quotes, characters of 2, 3 and 4 bytes. */
const text = (i: number) => `question ${i} \u0007 "quoted" é 日本語 🐝`;

interface Status {
  state: string;
  pid: number;
  total: number;
  done: number;
  ok: number;
  failed: number;
  cancelled: number;
  wallMs: number;
  exitCode?: number;
}

const t0 = Date.now();
const say = (line: string) => process.stdout.write(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);

/** user+sys of a live process in seconds (its /proc stat), or undefined once it is gone. */
function cpuOf(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  if (!haveSshd) throw new Error('no sshd (scripts/install-test-deps.sh installs openssh-server)');
  ensureBuilt();
  const { dir, cleanup } = await tempDir();
  const sshd = new TestSshd();
  const sims: Sim[] = [];
  try {
    // Each answer takes ~10 ms of server time: the run lasts long enough to be killed around.
    const flags = ['--ttft-ms', '5', '--tpot-ms', '1'];
    for (const name of ['hosts-a', 'hosts-b']) sims.push(await startSim(dir, name, PER_SIM, flags, {}, 30_000));
    const hostfile = join(dir, 'hosts');
    await writeFile(hostfile, `${sims.flatMap((s) => s.lines).join('\n')}\n`);
    const promptsFile = join(dir, 'prompts.txt');
    await writeFile(promptsFile, Array.from({ length: n }, (_, i) => text(i)).join('\n'));
    await sshd.start();
    const login = ['--via', sshd.via, '--ssh-config', sshd.clientConfig, '--runs-dir', join(dir, 'remote-runs')];
    say(`${n.toLocaleString('en-US')} prompts ${batched ? 'batched' : 'as individual requests'}, ${sims.length * PER_SIM} endpoints in ${sims.length} swarm sim processes, login ${sshd.via}`);

    const argv = ['scatter', '--hostfile', hostfile, '--prompts', promptsFile, ...(batched ? [] : ['--no-batch']), '--concurrency', String(concurrency), '--detach', ...login];
    say(`swarm ${argv.join(' ')}`);
    const started = await runCli(argv, { timeoutMs: 300_000 });
    if (started.code !== 0) throw new Error(`detach exit ${started.code}: ${started.stderr}`);
    const id = started.stdout.trim();
    say(`started: ${started.stderr.trim()}`);
    const folder = join(dir, 'remote-runs', id);
    const status = () => JSON.parse(readFileSync(join(folder, 'status.json'), 'utf8')) as Status;
    const runPid = status().pid;
    let runCpu = 0;
    const cpuWatch = setInterval(() => (runCpu = cpuOf(runPid) ?? runCpu), 1000);

    // A client follows it; at a tenth done it is killed, then the login under it: the ssh master, the sshd and its sessions.
    const client = spawnCli(['attach', id, ...login]);
    let seen = '';
    client.stderr!.setEncoding('utf8').on('data', (d: string) => (seen += d));
    await until(() => seen.includes(id) && masters(sshd.port).length > 0, 'the client to follow the run through its ssh master', 120_000, { intervalMs: 100 });
    await until(() => status().done >= n / 10, `a tenth of ${n} done`, 900_000, { intervalMs: 250 });
    const mastersNow = masters(sshd.port);
    say(`the client follows it: ${seen.trim().split('\n').at(-1)}`);
    client.kill('SIGKILL');
    for (const pid of mastersNow) process.kill(pid, 'SIGKILL');
    say(`kill -9 of the attaching client (pid ${client.pid}) and of the ssh master(s) (pid ${mastersNow.join(', ')}) at ${status().done.toLocaleString('en-US')} done`);
    await until(() => sshd.busy().length === 0, 'no command running in a session', 60_000, { intervalMs: 100 });
    await sshd.kill();
    const before = status().done;
    say(`sshd and its sessions killed at ${before.toLocaleString('en-US')} done; masters left: ${masters(sshd.port).length}; run pid ${runPid} alive: ${cpuOf(runPid) !== undefined}`);
    if (before >= n) throw new Error('the run was over before the login went away: make it slower');
    await until(() => status().done >= before + n / 20, 'progress with no client and no login', 900_000, { intervalMs: 500 });
    say(`with no client and no login the run went on: ${status().done.toLocaleString('en-US')} done`);

    await sshd.start();
    say('sshd started again');
    const listed = await runCli(['runs', id, ...login], { timeoutMs: 120_000 });
    say(`swarm runs ${id} …: ${listed.stdout.trim()} (exit ${listed.code})`);
    const copy = join(dir, 'copy.jsonl');
    const attached = await finished(spawnCli(['attach', id, '--out', copy, '--quiet', ...login]), 'attach', 1_800_000);
    clearInterval(cpuWatch);
    say(`swarm attach ${id} --out copy.jsonl --quiet …: exit ${attached.code}\n${attached.stderr.trim().replace(/^/gm, '    ')}`);
    const end = status();
    say(`status: ${JSON.stringify({ state: end.state, exitCode: end.exitCode, total: end.total, done: end.done, ok: end.ok, failed: end.failed, cancelled: end.cancelled, wallMs: end.wallMs })}; the run's CPU (user+sys, last read while alive, each second): ${runCpu.toFixed(1)} s`);

    // The copy, row by row.
    let rows = 0;
    let outOfOrder = 0;
    let wrongPrompt = 0;
    let notOk = 0;
    const hash = createHash('sha256');
    const lines = createInterface({ input: createReadStream(copy, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      hash.update(`${line}\n`);
      const row = JSON.parse(line) as { index: number; prompt: string; status: string };
      if (row.index !== rows) outOfOrder++;
      if (row.prompt !== text(rows)) wrongPrompt++;
      if (row.status !== 'ok') notOk++;
      rows++;
    }
    const remote = createHash('sha256').update(readFileSync(join(folder, 'results.jsonl'))).digest('hex');
    say(`check of the copy: ${rows.toLocaleString('en-US')} rows (want ${n.toLocaleString('en-US')}); index ≠ line: ${outOfOrder}; prompt ≠ its input line: ${wrongPrompt}; status ≠ ok: ${notOk}; sha256 same as the login node's results.jsonl: ${hash.digest('hex') === remote} (${(statSync(copy).size / 1e6).toFixed(1)} MB)`);

    const counts = await Promise.all(sims.flatMap((s) => s.endpoints).map((e) => requestCounts(e)));
    const served = counts.reduce((sum, c) => sum + c.chat2xx + c.completions2xx, 0);
    const all = counts.reduce((sum, c) => sum + c.chatAll + c.completionsAll, 0);
    say(`servers' own counters (http_requests_total, generation POSTs): ${served.toLocaleString('en-US')} answered 2xx, ${all.toLocaleString('en-US')} in all (per server ${counts.map((c) => c.chat2xx + c.completions2xx).join(', ')})`);
    const good = attached.code === 0 && rows === n && !outOfOrder && !wrongPrompt && !notOk;
    say(good ? 'PASS' : 'FAIL');
    process.exitCode = good ? 0 : 1;
  } finally {
    await killAll();
    for (const s of sims) await s.stop();
    await sshd.stop();
    await cleanup();
  }
}

await main();
