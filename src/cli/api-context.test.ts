import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_URL, defaultConfigFile, resolveConnection } from './api-context.js';

const dir = mkdtempSync(join(tmpdir(), 'ct-api-context-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('where the trader commands find the service and the key', () => {
  const xdg = join(dir, 'xdg');
  mkdirSync(join(xdg, 'copytrade'), { recursive: true });
  writeFileSync(join(xdg, 'copytrade', 'config.json'), JSON.stringify({ url: 'http://file:1', apiKey: 'ctk_file' }));

  it('flags win over the environment, which wins over the config file, then the default URL', () => {
    expect(defaultConfigFile({ XDG_CONFIG_HOME: xdg })).toBe(join(xdg, 'copytrade', 'config.json'));
    expect(
      resolveConnection(
        { url: 'http://flag:1', key: 'ctk_flag' },
        { XDG_CONFIG_HOME: xdg, COPYTRADE_URL: 'http://env:1', COPYTRADE_API_KEY: 'ctk_env' },
      ),
    ).toEqual({ url: 'http://flag:1', apiKey: 'ctk_flag' });
    expect(
      resolveConnection({}, { XDG_CONFIG_HOME: xdg, COPYTRADE_URL: 'http://env:1', COPYTRADE_API_KEY: 'ctk_env' }),
    ).toEqual({ url: 'http://env:1', apiKey: 'ctk_env' });
    expect(resolveConnection({}, { XDG_CONFIG_HOME: xdg, COPYTRADE_URL: '', COPYTRADE_API_KEY: '' })).toEqual({
      url: 'http://file:1',
      apiKey: 'ctk_file',
    });
    expect(resolveConnection({ key: 'ctk_flag' }, { XDG_CONFIG_HOME: join(dir, 'none') })).toEqual({
      url: DEFAULT_URL,
      apiKey: 'ctk_flag',
    });
  });

  it('no key anywhere, an explicit file that is missing, or one that is not JSON: a clear error', () => {
    expect(() => resolveConnection({}, { XDG_CONFIG_HOME: join(dir, 'none') })).toThrow(
      /no API key: pass --key, set COPYTRADE_API_KEY/,
    );
    expect(() => resolveConnection({ config: join(dir, 'missing.json') }, {})).toThrow(/cannot read the config file/);
    writeFileSync(join(dir, 'bad.json'), '{url:');
    expect(() => resolveConnection({}, { COPYTRADE_CONFIG: join(dir, 'bad.json') })).toThrow(/is not JSON/);
  });
});
