// The module scripts/build-extension-tests.mjs generates: one entry per test/extension-host/suite/*.test.ts.
declare module 'virtual:extension-host-suites' {
  export const suites: ReadonlyArray<{ file: string; load: () => unknown }>;
}
