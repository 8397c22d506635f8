import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { createCopytradeClient, type CopytradeClient } from '../client/index.js';
import { AppError } from '../domain/errors.js';

/** The service's own default address (config.ts: HOST 127.0.0.1, PORT 8080). */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface ApiFlags {
  url?: string;
  key?: string;
  config?: string;
  json?: boolean;
}

interface ConfigFile {
  url?: string;
  apiKey?: string;
}

/** `$XDG_CONFIG_HOME/copytrade/config.json`, else `~/.config/copytrade/config.json`. */
export function defaultConfigFile(env = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'copytrade', 'config.json');
}

function readConfig(file: string, explicit: boolean): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (!explicit && (err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new AppError('invalid_request', `cannot read the config file ${file}: ${(err as Error).message}`);
  }
  try {
    const v = JSON.parse(text) as ConfigFile;
    return v && typeof v === 'object' ? v : {};
  } catch {
    throw new AppError(
      'invalid_request',
      `the config file ${file} is not JSON (expected {"url": "...", "apiKey": "ctk_..."})`,
    );
  }
}

/**
 * Where to reach the service and with which API key: flags win, then the environment (COPYTRADE_URL,
 * COPYTRADE_API_KEY), then the config file, then the default URL. No key anywhere is a clear error.
 */
export function resolveConnection(f: ApiFlags, env = process.env): { url: string; apiKey: string } {
  const file = f.config ?? env.COPYTRADE_CONFIG ?? defaultConfigFile(env);
  const cfg = readConfig(file, f.config !== undefined || env.COPYTRADE_CONFIG !== undefined);
  const url = f.url ?? (env.COPYTRADE_URL || undefined) ?? cfg.url ?? DEFAULT_URL;
  const apiKey = f.key ?? (env.COPYTRADE_API_KEY || undefined) ?? cfg.apiKey;
  if (!apiKey) {
    throw new AppError(
      'unauthorized',
      `no API key: pass --key, set COPYTRADE_API_KEY, or put {"apiKey": "ctk_..."} in ${file} ` +
        "(the demo's is in .copytrade/demo-credentials.json; create one with `copytrade keys create --email E`)",
    );
  }
  return { url, apiKey };
}

export function clientFor(f: ApiFlags): CopytradeClient {
  const c = resolveConnection(f);
  return createCopytradeClient({ baseUrl: c.url, apiKey: c.apiKey });
}

/** The options every command that talks to the API takes. */
export function withApiOptions(cmd: Command): Command {
  return cmd
    .option(
      '--url <url>',
      `the service's family V base URL (default $COPYTRADE_URL, the config file's url, or ${DEFAULT_URL})`,
    )
    .option('--key <apiKey>', "API key (default $COPYTRADE_API_KEY or the config file's apiKey)")
    .option('--config <file>', 'config file (default $COPYTRADE_CONFIG or ~/.config/copytrade/config.json)')
    .option('--json', 'print JSON for scripts');
}
