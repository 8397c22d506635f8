import { describe, expect, it } from 'vitest';
import { runTool } from './run-tool.js';

/**
 * Dead code (knip.json: the entry points are the CLI, main, the dashboard, every test, the bench and the
 * scripts): no unused file, export, exported type or dependency. An export used only by its own file counts
 * as used; a symbol nothing uses goes, and so does a dependency nothing imports.
 */
describe('knip', () => {
  it('finds no unused file, export or dependency', async () => {
    const run = await runTool('knip', ['--no-progress', '--no-config-hints']);
    expect(run.stdout + run.stderr).not.toMatch(/Unused|Unlisted|Unresolved|Duplicate/);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  }, 180_000);
});
