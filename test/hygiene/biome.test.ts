import { describe, expect, it } from 'vitest';
import { runTool } from './run-tool.js';

/**
 * Formatting and lint (biome.jsonc): `biome ci` over the code. To fix what it reports:
 * `npx biome check --write src test bench scripts` (formats, sorts nothing, applies safe fixes).
 */
describe('biome', () => {
  it('formats and lints src, test, bench and scripts without an error', async () => {
    const run = await runTool('biome', [
      'ci',
      '--colors=off',
      '--max-diagnostics=50',
      'src',
      'test',
      'bench',
      'scripts',
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  }, 120_000);
});
