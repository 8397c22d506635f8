import type { Command } from 'commander';
import { type Config, loadConfig } from '../../config/config.js';
import type { CheckResult } from '../../doctor/check.js';
import { dataDirOpt, keyFileOpt } from '../admin-store.js';
import { EXIT } from '../errors.js';

interface DoctorFlags {
  dataDir?: string;
  secretKeyFile?: string;
  demo?: boolean;
  simulator: string;
  platform?: string;
  timeoutMs: string;
  json?: boolean;
}

const PLATFORMS = ['platforma', 'platformb', 'platformc'] as const;

/** `ok   check  detail` with the fix on the next line: people read it top to bottom. */
function formatChecks(results: CheckResult[]): string {
  const w = Math.max(...results.map((r) => r.check.length));
  return results
    .map(
      (r) =>
        `${r.status.toUpperCase().padEnd(4)}  ${r.check.padEnd(w)}  ${r.detail}${r.fix ? `\n${' '.repeat(w + 8)}fix: ${r.fix}` : ''}`,
    )
    .join('\n');
}

function platformsOf(list: string | undefined): Array<(typeof PLATFORMS)[number]> {
  if (!list) return [...PLATFORMS];
  const names = list.split(',').map((s) => s.trim());
  const bad = names.filter((n) => !(PLATFORMS as readonly string[]).includes(n));
  if (bad.length > 0) throw new Error(`--platform: ${bad.join(', ')} is not one of ${PLATFORMS.join(', ')}`);
  return names as Array<(typeof PLATFORMS)[number]>;
}

export function doctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the configuration before going live: platform credentials and hosts (DNS, answer, TLS), the clock, ' +
        'the OAuth public URL, the store, NATS and the credential key; exits 1 when a check fails',
    )
    .option(...dataDirOpt)
    .option(...keyFileOpt)
    .option('--demo', 'check the demo configuration (the simulated brokers) as `serve --demo` would use it')
    .option(
      '--simulator <where>',
      'demo brokers: "auto" (the data dir\'s `copytrade simulator`), an endpoints file, or "in-process"',
      process.env.COPYTRADE_SIMULATOR || 'auto',
    )
    .option('--platform <list>', `check only these platforms (comma-separated: ${PLATFORMS.join(', ')})`)
    .option('--timeout-ms <ms>', 'bound of each network check', '3000')
    .option('--json', 'print the checks as a JSON array of {status, check, detail, fix}')
    .action(async (o: DoctorFlags) => {
      const timeoutMs = Number(o.timeoutMs);
      if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new Error('--timeout-ms must be a positive integer');
      const platforms = platformsOf(o.platform);
      let results: CheckResult[];
      let cfg: Config | null = null;
      try {
        cfg = loadConfig({
          ...(o.dataDir ? { dataDir: o.dataDir } : {}),
          ...(o.secretKeyFile ? { secretKeyFile: o.secretKeyFile } : {}),
          ...(o.demo ? { demo: true } : {}),
        });
      } catch (err) {
        results = [
          {
            status: 'fail',
            check: 'config',
            detail: (err as Error).message,
            fix: 'correct the setting named (see docs/operations.md)',
          },
        ];
      }
      if (cfg) {
        const { runDoctor } = await import('../../doctor/doctor.js');
        results = await runDoctor({ cfg, simulator: o.simulator, platforms, timeoutMs });
      }
      const failed = results!.some((r) => r.status === 'fail');
      process.stdout.write(o.json ? `${JSON.stringify(results!)}\n` : `${formatChecks(results!)}\n`);
      if (!o.json) {
        const count = (s: string) => results!.filter((r) => r.status === s).length;
        process.stderr.write(`${count('ok')} ok, ${count('warn')} warn, ${count('fail')} fail\n`);
      }
      if (failed) process.exitCode = EXIT.failed;
    });
}
