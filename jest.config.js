// Three projects so a developer can run one layer at a time (`jest --selectProjects unit`).
// Type checking is done once by `tsc --noEmit` in `npm test`; here ts-jest only transpiles,
// which keeps the suite fast on a 2-core machine. @middy/*, @noble/hashes, hyparquet and hyparquet-writer ship ESM only, so they are transformed too.
const transform = {
  '^.+\\.[tj]s$': [
    'ts-jest',
    {
      tsconfig: { module: 'commonjs', moduleResolution: 'node10', allowJs: true, isolatedModules: true, ignoreDeprecations: '6.0' },
      diagnostics: false,
    },
  ],
};
const transformIgnorePatterns = ['/node_modules/(?!(@middy|@noble|hyparquet|hyparquet-writer)/)'];
// The integration files whose tests time themselves against the machine: injected faults and outages
// on timers (reliability/), `npm start` killed with -9 and restarted, a console process outliving
// its runtime. A second stack beside them is load that made them flaky (CONTRIBUTING.md, "Workers").
const serialIntegration = [
  'test/integration/reliability/**/*.test.ts',
  'test/integration/npm-start.test.ts',
  'test/integration/console-runtime-restart.test.ts',
];
/** A glob of `serialIntegration` as the regular expression `testPathIgnorePatterns` takes. */
const asPattern = (glob) => glob.replace(/[.]/g, '\\.').replace('/**/*', '/.*');
// The SDK packages import their own files as `./x.js`, as Node's ESM needs in the built package: Jest finds `./x.ts`.
const moduleNameMapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };
const common = {
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns,
  moduleNameMapper,
  setupFiles: ['<rootDir>/test/support/env.ts'],
};

module.exports = {
  // Tests against the emulators do real I/O on a 2-core machine; under load a few take longer than
  // Jest's 5 s default, and a test cut short leaves its emulator restarts running after teardown.
  // 60 s: CI runs two integration files at a time, and a property test of a few hundred requests
  // (privacy-request's, skan-postback's junk flood) then takes twice what it takes alone.
  testTimeout: 60_000,
  // `npm run test:coverage` (the unit project with --coverage; not `npm test`, which it would slow)
  // measures the domain rules, which the unit tests cover without I/O, and fails under these floors:
  // a little below what the unit tests reached when they were set (96.1/91.7/96.0/97.3 %).
  collectCoverageFrom: ['<rootDir>/functions/domain/**/*.ts'],
  coverageThreshold: {
    './functions/domain/': { statements: 95, branches: 90, functions: 94, lines: 96 },
  },
  projects: [
    // The SDK packages' own tests (packages/*/test) are unit tests: no emulator, no I/O.
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/packages/*/test/**/*.test.ts'] },
    // Integration files run two at a time (CI's `--maxWorkers=2`): each starts its own stack on free
    // ports in its own directory. The files in `serialIntegration` run alone, one at a time, after
    // them: their tests are timed against the machine (fault timers, process kills and restarts).
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...serialIntegration.map(asPattern)],
    },
    { ...common, displayName: 'integration-serial', testMatch: serialIntegration.map((path) => `<rootDir>/${path}`) },
    { ...common, displayName: 'stack', testMatch: ['<rootDir>/test/stack/**/*.test.ts'] },
  ],
};
