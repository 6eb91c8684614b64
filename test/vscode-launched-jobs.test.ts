/**
 * Launched jobs in a real VS Code extension host (code-server): the suites in
 * test/extension-host/launched-jobs/ connect and launch through a real loopback sshd whose sessions
 * reach a real one-node Slurm, and count the logins in sshd's own log (one login per window); a run
 * on a one-minute job stops at its walltime; the panel's Drain drains the run going.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, ROOT } from './helpers/cli.ts';
import { codeServerAvailable, runExtensionHostTests } from './helpers/code-server.ts';
import { freePorts, slurmUnavailable, TestSlurm } from './helpers/slurm.ts';
import { haveSshd, TestSshd } from './helpers/sshd.ts';
import { patience } from './helpers/patience.ts';

const skip = !codeServerAvailable ? 'code-server is not installed (scripts/install-code-server.sh)' : !haveSshd ? 'openssh-server is not installed (scripts/install-test-deps.sh)' : (slurmUnavailable ?? false);
const ENTRY = join(ROOT, 'dist-test', 'launched-jobs.cjs');

describe('launched jobs in a real VS Code: one SSH login per window, the walltime, the panel\'s Drain (real sshd, real Slurm)', { skip, timeout: patience(1_000_000) }, () => {
  const slurm = new TestSlurm();
  let sshd: TestSshd;
  let workspace = '';

  before(async () => {
    for (const args of [['build.mjs'], ['build-extension-tests.mjs', '--suites', join(ROOT, 'test', 'extension-host', 'launched-jobs'), '--out', ENTRY]]) {
      const built = spawnSync(process.execPath, [join(ROOT, 'scripts', args[0]!), ...args.slice(1)], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(built.status, 0, `${args[0]}: ${built.stdout}${built.stderr}`);
    }
    await slurm.start();
    // The login's sessions must find this cluster: the server sets SLURM_CONF for each.
    sshd = new TestSshd({ SLURM_CONF: slurm.conf });
    await sshd.start();
    workspace = await mkdtemp(join(tmpdir(), 'swarm-launched-jobs-'));
  });

  after(async () => {
    await sshd?.stop();
    await slurm.stop();
    if (workspace) await rm(workspace, { recursive: true, force: true });
  });

  it('passes test/extension-host/launched-jobs/*.test.ts', async (t) => {
    const { code, log } = await runExtensionHostTests({
      extensionPath: ROOT,
      testsEntry: ENTRY,
      workspace,
      timeoutMs: 900_000,
      env: { ...slurm.env, SWARM_TEST_SSHD_LOG: sshd.log, SWARM_TEST_SSHD_PORT: String(sshd.port), SWARM_TEST_SLURM_CONF: slurm.conf, SWARM_TEST_PORT_BASE: String(await freePorts(4)), SWARM_EXT_TEST_TIMEOUT: '240000' },
      machineSettings: { 'swarmLab.ssh.via': sshd.via, 'swarmLab.ssh.configFile': sshd.clientConfig },
      userSettings: {
        'swarmLab.launch.swarmCommand': `${process.execPath} ${BIN}`,
        'swarmLab.launch.pollInterval': 1,
        'swarmLab.healthInterval': 60,
        // Two requests at a time, so 10,000 prompts outlast a one-minute job (walltime-stop.test.ts).
        'swarmLab.concurrency': 2,
        'swarmLab.batching': false,
      },
    });
    t.diagnostic(log.trim());
    assert.equal(code, 0, log);
    assert.match(log, /# result: 4 test\(s\), 0 failed/);
  });
});
