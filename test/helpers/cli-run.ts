import { execFile } from 'node:child_process';
import { CLI } from './cli-command.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the `copytrade` CLI (cli-command.ts) to its end: exit code and both outputs (never throws on a non-zero exit). */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI, ...args],
      {
        // No config file of the machine's user leaks in; the test says where the service and the key are.
        env: {
          ...process.env,
          DATABASE_URL: '',
          LOG_LEVEL: 'warn',
          COPYTRADE_URL: '',
          COPYTRADE_API_KEY: '',
          XDG_CONFIG_HOME: '/nonexistent-copytrade-test',
          ...env,
        },
        maxBuffer: 16 * 1024 * 1024,
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
