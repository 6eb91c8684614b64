/** The core's public surface: what the CLI, the extension and the tests use. */
export * from './endpoint.ts';
export * from './hostfile/index.ts';
export { EndpointClient, type Route } from './http/endpoint-client.ts';
export { RequestFailure, type FailureKind } from './http/failure.ts';
export * from './health.ts';
export * from './models.ts';
export * from './options.ts';
export { SwarmPool, SelectionError, type EndpointState, type EndpointHealth } from './pool.ts';
export * from './prompts.ts';
export * from './result.ts';
export { DEFAULT_RETRY, type RetryPolicy } from './retry.ts';
export { Run, type RunEvents, type RunProgress, type RunReport, type EndpointEvent } from './run.ts';
export * from './summary.ts';
export type { RunOptions } from './plan.ts';
export { scatterGather, type ScatterOptions } from './patterns/scatter-gather.ts';
export { mapGather } from './patterns/map-gather.ts';
export { broadcast } from './patterns/broadcast.ts';
export { treeReduce, type TreeReduceInput, type ReduceOutcome, type ReduceLevel } from './patterns/tree-reduce.ts';
