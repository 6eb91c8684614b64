// Bundles with esbuild: the CLI (its npm packages inlined but the native engine and the SDK) and the
// VS Code extension (everything inlined but `vscode`, so the .vsix needs no node_modules).
import { copyFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { build as esbuild } from 'esbuild';

/**
 * esbuild's own write truncates each file, then fills it: a `swarm` started meanwhile (the test run
 * starts CLIs and code-servers while a suite rebuilds) loads an empty or half bundle and quietly does
 * nothing. Each file is therefore written beside itself and renamed over the old one, so a reader gets
 * the old bundle or the new, whole.
 */
const tmpOf = (path) => `${path}.${process.pid}.tmp`;
async function replace(path, write) {
  await mkdir(dirname(path), { recursive: true });
  await write(tmpOf(path));
  await rename(tmpOf(path), path);
}
async function build(options) {
  const { outputFiles } = await esbuild({ ...options, write: false });
  await Promise.all(outputFiles.map((f) => replace(f.path, (tmp) => writeFile(tmp, f.contents))));
}

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };
/** The llama engine is the CLI's alone: its native binding must never be inlined into the extension. */
const noNativeEngine = {
  name: 'no-native-engine',
  setup(b) {
    b.onResolve({ filter: /^node-llama-cpp$/ }, (args) => {
      throw new Error(`${args.importer} reaches node-llama-cpp: the extension bundle must not`);
    });
  },
};
const extension = { ...common, format: 'cjs', external: ['vscode'], minify: true };

/**
 * The extension in two files, so activation reads and runs only what it needs (commands registered,
 * the tree, the status bar, the CodeLens): src/extension/on-demand.ts, what commands load on first
 * use, becomes dist/extension-lazy.cjs, and its `import()` a `require` of that file.
 */
const onDemandApart = {
  name: 'on-demand-apart',
  setup(b) {
    b.onResolve({ filter: /\/on-demand\.ts$/ }, (args) => {
      if (args.kind !== 'dynamic-import') throw new Error(`${args.importer} imports on-demand.ts statically: use import()`);
      return { path: './extension-lazy.cjs', external: true };
    });
  },
};

await Promise.all([
  build({
    ...common,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    format: 'esm',
    // Inlined, not resolved file by file at start-up (undici alone is ~100 modules: 40 ms of every
    // command). Left out: the native engine, and the openai SDK only the bench loads.
    external: ['node-llama-cpp', 'openai'],
    // Bundled CommonJS packages require node's built-ins: give the ES module a require.
    banner: { js: "import { createRequire as swarmRequire } from 'node:module'; const require = swarmRequire(import.meta.url);" },
  }),
  build({ ...extension, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.cjs', plugins: [onDemandApart, noNativeEngine], supported: { 'dynamic-import': false } }),
  build({ ...extension, entryPoints: ['src/extension/on-demand.ts'], outfile: 'dist/extension-lazy.cjs', plugins: [noNativeEngine] }),
  // `Swarm: Start Local Simulator`'s servers, on a thread of their own (src/sim/cluster-thread.ts).
  build({ ...extension, entryPoints: ['src/sim/cluster-worker.ts'], outfile: 'dist/sim-worker.cjs', plugins: [noNativeEngine] }),
  // The panel's front end (webview/): browser IIFE + its CSS, and the codicon font its icons need.
  build({ entryPoints: ['webview/main.ts'], outfile: 'dist/webview/panel.js', bundle: true, format: 'iife', platform: 'browser', target: 'chrome120', minify: true, sourcemap: true, logLevel: 'warning' }).then(() =>
    Promise.all(['codicon.css', 'codicon.ttf'].map((f) => replace(`dist/webview/${f}`, (tmp) => copyFile(`node_modules/@vscode/codicons/dist/${f}`, tmp)))),
  ),
  // The experiment view (webview/experiment/): a page of its own, JS + CSS.
  build({ entryPoints: ['webview/experiment/main.ts'], outfile: 'dist/webview/experiment.js', bundle: true, format: 'iife', platform: 'browser', target: 'chrome120', minify: true, sourcemap: true, logLevel: 'warning' }),
]);
