import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    // A whole demo service starts in some hooks: past 60 s seen at load 26 on a shared CI machine.
    hookTimeout: 120_000,
    pool: 'forks',
    // The second names a test file whose process died, which vitest's own output leaves out.
    reporters: ['default', './test/reporters/unfinished-files.ts', './test/reporters/file-times.ts'],
    globalSetup: ['test/browser/global-setup.ts'],
  },
});
