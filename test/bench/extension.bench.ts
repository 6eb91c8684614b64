// `npm run bench`, second half: the extension's bundle and .vsix sizes, and its activation time in a
// real extension host (code-server). Prints n/a for the latter where code-server is not installed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { codeServerAvailable, runExtensionHostTests } from '../helpers/code-server.ts';
import { ROOT } from '../helpers/cli.ts';

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
const packaged = spawnSync('npm', ['run', '--silent', 'package'], { cwd: ROOT, encoding: 'utf8' });
if (packaged.status !== 0) throw new Error(`npm run package failed:\n${packaged.stdout}${packaged.stderr}`);
console.log('\nVS Code extension');
const size = (file: string) => kb(statSync(join(ROOT, file)).size);
console.log(`  bundle dist/extension.cjs ${size('dist/extension.cjs')} (activation) + dist/extension-lazy.cjs ${size('dist/extension-lazy.cjs')} (first command) · swarm-lab.vsix ${size('swarm-lab.vsix')}`);

if (!codeServerAvailable) {
  console.log('  activation: n/a (code-server not installed: scripts/install-code-server.sh)');
} else {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-bench-'));
  try {
    const entry = join(dir, 'activation.cjs');
    await build({ entryPoints: [join(ROOT, 'test', 'bench', 'activation-entry.ts')], outfile: entry, bundle: true, platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'], logLevel: 'warning' });
    const samples: number[] = [];
    for (let i = 0; i < 3; i++) {
      const out = join(dir, `activation-${i}.json`);
      const workspace = mkdtempSync(join(dir, 'ws-'));
      const { code, log } = await runExtensionHostTests({ extensionPath: ROOT, testsEntry: entry, workspace, env: { SWARM_BENCH_OUT: out } });
      if (code !== 0) throw new Error(`activation run failed:\n${log}`);
      samples.push((JSON.parse(readFileSync(out, 'utf8')) as { activateMs: number }).activateMs);
    }
    samples.sort((a, b) => a - b);
    console.log(`  activation in a fresh extension host (code-server 4.99 / VS Code 1.99): median ${samples[1]!.toFixed(1)} ms of ${samples.map((s) => s.toFixed(1)).join(', ')} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
