export { batchesVaried, fitLatencyModel, FitError, type LatencyModel } from './latency-model.ts';
export { endpointsForDeadline, predictWall, type PredictedRun, type Prediction, type Scenario } from './predict.ts';
