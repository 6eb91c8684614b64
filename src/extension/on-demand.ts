/**
 * Everything the commands need and activation does not: the pool and its HTTP stack (undici), SSH
 * tunnels, runs, the simulator, the panel's host. Loaded on first use through `import()`; the build
 * (scripts/build.mjs) makes it a file of its own, dist/extension-lazy.cjs, so activation neither
 * reads nor runs it.
 */
export { connect, connectRemote, disconnect, reconnect } from './commands/connect.ts';
export { attachJob, cancelJob, drainRun, launch, restoreJobs } from './commands/launch.ts';
export { attachDetachedRun, cancelDetachedRun, restoreAttached, resumeDetachedRun } from './commands/detached.ts';
export { copyUrl, openMetrics, toggleExclude } from './commands/endpoint-actions.ts';
export { compare, scatter, treeReduceCommand } from './commands/run.ts';
export { startSimulator } from './commands/simulator.ts';
export { waitForServers } from './commands/wait.ts';
export { SwarmConnection } from './connection.ts';
export { PanelHost } from './panel/panel-host.ts';
export { exportRun } from './panel/run-export.ts';
export { runExperiment } from './experiment/experiment-panel.ts';
