import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderTemplate, templateValues, TemplateError, type LaunchParams } from '../src/core/index.ts';
import { ROOT } from './helpers/cli.ts';

const template = (name: string) => readFileSync(join(ROOT, 'templates', 'jobs', name), 'utf8');

const params = (over: Partial<LaunchParams> = {}): LaunchParams => ({
  scheduler: 'pbs',
  jobName: 'swarm-20261126-101200',
  nodes: 2,
  serversPerNode: 6,
  tensorParallel: 2,
  model: 'meta-llama/Llama-3.1-8B-Instruct',
  portBase: 8000,
  walltimeSeconds: 1800,
  queue: 'debug-scaling',
  account: 'ModCon',
  vllmFlags: ['--max-model-len', '32768', '--dtype', 'bfloat16'],
  engine: 'vllm',
  jobDir: '/home/brettin/.swarm/jobs/swarm-20261126-101200',
  swarmCommand: [],
  role: 'chat',
  ...over,
});

/** bash's own parser on the rendered script: it must at least be valid bash. */
function bashAccepts(script: string): void {
  const r = spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

describe('job templates', () => {
  it('Aurora (PBS): directives, tiles per server, the hostfile path, flags as bash words', () => {
    const script = renderTemplate(template('aurora-pbs.sh'), templateValues(params()));
    for (const line of ['#PBS -N swarm-20261126-101200', '#PBS -l select=2', '#PBS -l walltime=00:30:00', '#PBS -q debug-scaling', '#PBS -A ModCon', '#PBS -o /home/brettin/.swarm/jobs/swarm-20261126-101200/job.out']) {
      assert.ok(script.split('\n').includes(line), `${line} in:\n${script}`);
    }
    assert.match(script, /^export ENGINE=vllm MODEL=meta-llama\/Llama-3\.1-8B-Instruct PORT_BASE=8000 PER_NODE=6 TP=2$/m);
    assert.match(script, /^HOSTFILE=\/home\/brettin\/\.swarm\/jobs\/swarm-20261126-101200\/hostfile$/m);
    assert.match(script, /^VLLM_FLAGS=\('--max-model-len' '32768' '--dtype' 'bfloat16'\)$/m);
    assert.match(script, /^export ZE_FLAT_DEVICE_HIERARCHY=FLAT$/m);
    assert.match(script, /VLLM_HOST_IP=\$\(getent hosts "\$\(hostname\)\.hsn\.cm\.aurora\.alcf\.anl\.gov"/);
    assert.doesNotMatch(script, /\{\{\s*[a-z_]+\s*\}\}/);
    bashAccepts(script);
  });

  it('Slurm: the same swarm as #SBATCH lines; an unset account or queue leaves its directive out', () => {
    const script = renderTemplate(template('slurm.sh'), templateValues(params({ scheduler: 'slurm', account: undefined, queue: undefined, walltimeSeconds: 90_000 })));
    assert.ok(script.includes('#SBATCH --time=25:00:00\n'));
    assert.ok(script.includes('#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=6\n'));
    assert.doesNotMatch(script, /--account|--partition/);
    bashAccepts(script);
  });

  it('the simulator engine runs the given swarm command; nothing typed can run as shell code', () => {
    const script = renderTemplate(template('slurm.sh'), templateValues(params({ engine: 'sim', swarmCommand: ['/usr/bin/node', '/opt/swarm lab/bin/swarm.js'], vllmFlags: ["--x=$(touch /tmp/pwned)", "it's"] })));
    assert.match(script, /^SWARM=\('\/usr\/bin\/node' '\/opt\/swarm lab\/bin\/swarm\.js'\)$/m);
    assert.match(script, /^VLLM_FLAGS=\('--x=\$\(touch \/tmp\/pwned\)' 'it'\\''s'\)$/m);
    // Evaluating the assignment gives back exactly the words typed.
    const r = spawnSync('bash', ['-c', `${/^VLLM_FLAGS=.*$/m.exec(script)![0]}; printf '%s\\n' "\${VLLM_FLAGS[@]}"`], { encoding: 'utf8' });
    assert.equal(r.stdout, "--x=$(touch /tmp/pwned)\nit's\n");
  });

  it('bad values are one clear error each', () => {
    const bad: Array<[Partial<LaunchParams>, RegExp]> = [
      [{ queue: 'debug; rm -rf ~' }, /^queue "debug; rm -rf ~" may use only/],
      [{ account: '$(id)' }, /^account "\$\(id\)" may use only/],
      [{ model: '' }, /^a model is needed$/],
      [{ model: 'a b' }, /^model "a b" may use only/],
      [{ jobDir: 'relative/dir' }, /^job folder "relative\/dir" must be absolute/],
      [{ jobName: '-x' }, /^job name "-x" must start with a letter/],
      [{ nodes: 0 }, /^nodes must be an integer from 1/],
      [{ portBase: 65_534, serversPerNode: 6 }, /^port base 65534: the servers' ports must lie from 1024 to 65535$/],
      [{ walltimeSeconds: 30 }, /^walltime must be at least a minute$/],
      [{ engine: 'sim', swarmCommand: [] }, /^engine sim needs the command that runs swarm/],
    ];
    for (const [over, message] of bad) assert.throws(() => templateValues(params(over)), (err: Error) => err instanceof TemplateError && message.test(err.message), JSON.stringify(over));
  });

  it('a template: must start with #!, and may use only known placeholders', () => {
    const values = templateValues(params());
    assert.throws(() => renderTemplate('echo {{model}}\n', values), /must start with #!/);
    assert.throws(() => renderTemplate('#!/bin/bash\necho {{modle}}\n', values), /^TemplateError: unknown placeholder \{\{modle\}\}; known: job_name, nodes/);
    assert.equal(renderTemplate('#!/bin/sh\n#PBS -A {{account}}\n#PBS -N {{ job_name }}\nA={{account}}\n', { ...values, account: '' }), '#!/bin/sh\n#PBS -N swarm-20261126-101200\nA=\n');
  });
});
