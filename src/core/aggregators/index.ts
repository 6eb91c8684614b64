/** Aurora-Swarm's aggregators: pure functions over a run's results. */
export { usable, type AgentAnswer, type AnswerProblem } from './answers.ts';
export { majorityVote, type Vote } from './majority-vote.ts';
export { concat } from './concat.ts';
export { bestOf } from './best-of.ts';
export { topK } from './top-k.ts';
export { structuredMerge, type Merged } from './structured-merge.ts';
export { statistics, numberIn, type Stats } from './statistics.ts';
export { failureReport, type FailureReport } from './failure-report.ts';
export { AGGREGATE_NAMES, aggregate, aggregateText, type Aggregate, type AggregateName } from './named.ts';
