// Bundles with esbuild: the CLI (npm packages stay external: they are installed beside it) and the
// VS Code extension (everything inlined but `vscode`, so the .vsix needs no node_modules).
import { copyFile } from 'node:fs/promises';
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };

await Promise.all([
  build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', format: 'esm', packages: 'external' }),
  build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.cjs', format: 'cjs', external: ['vscode'], minify: true }),
  // The panel's front end (webview/): browser IIFE + its CSS, and the codicon font its icons need.
  build({ entryPoints: ['webview/main.ts'], outfile: 'dist/webview/panel.js', bundle: true, format: 'iife', platform: 'browser', target: 'chrome120', minify: true, sourcemap: true, logLevel: 'warning' }).then(() =>
    Promise.all(['codicon.css', 'codicon.ttf'].map((f) => copyFile(`node_modules/@vscode/codicons/dist/${f}`, `dist/webview/${f}`))),
  ),
]);
