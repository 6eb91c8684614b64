export { DEFAULT_SIM_OPTIONS, resolveSimOptions, type SimOptions } from './options.ts';
export { SimServer, type RuntimeFaults, type SimStats } from './server.ts';
export { startSimCluster, type SimCluster } from './cluster.ts';
