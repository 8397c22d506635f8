import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../src/config/package-root.js';

export const root = packageRoot();

/** Runs a dev tool from node_modules/.bin in the package root; resolves with its exit code and output, never throws. */
export function runTool(
  bin: string,
  args: string[],
  opts: { cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(root, 'node_modules', '.bin', bin),
      args,
      {
        cwd: opts.cwd ?? root,
        maxBuffer: 64 * 1024 * 1024,
        // No telemetry, update checks or colours: the run is offline and its output is read by the test.
        env: {
          ...process.env,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
          NO_COLOR: '1',
          FORCE_COLOR: '0',
          CI: 'true',
        },
      },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
