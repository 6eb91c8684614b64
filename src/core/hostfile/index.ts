export { cappedList, formatIssue, HostfileError, LISTED_ERRORS, type HostfileIssue } from './issue.ts';
export { DEFAULT_PORT, parseHostfile, type ParsedHostfile } from './parse.ts';
export { writeHostfile } from './write.ts';
export { hostfileFromText, loadHostfile, type LoadedHostfile } from './load.ts';
export { GrowingHostfile, type HostfileRead } from './growing.ts';
