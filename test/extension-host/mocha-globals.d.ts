// Mocha's BDD/TDD globals (describe/it/suite/test…) for test/extension-host/suite/*.test.ts; they run
// inside the extension host through test/extension-host/index.ts, not under node:test.
/// <reference types="mocha" />
