/** Tests are TypeScript ES modules run by Node 24: ts-jest only strips types (tsc checks them). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: { isolatedModules: true, esModuleInterop: true, module: 'esnext', moduleResolution: 'bundler', allowImportingTsExtensions: true, noEmit: true, verbatimModuleSyntax: false } }],
  },
  // Flue's adapter contract suites import vitest: run them on jest's globals.
  moduleNameMapper: { '^vitest$': '<rootDir>/test/support/vitest-shim.ts' },
  testMatch: ['<rootDir>/packages/*/test/**/*.test.ts', '<rootDir>/apps/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  testTimeout: 30_000,
  // The Eve app fixture's own build output (`eve dev` writes it next to the fixture).
  modulePathIgnorePatterns: ['<rootDir>/test/support/eve-mcp-app/.eve/'],
};
