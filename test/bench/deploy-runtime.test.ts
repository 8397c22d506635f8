import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deployRuntime, describeRuntime, parseUnit, serviceRuntime } from '../../bench/deploy-runtime.js';

describe('the runtime deploy/copytrade.service starts the service with', () => {
  it('reads the node flags between the binary and the script, and the plain Environment= lines', () => {
    const r = parseUnit(
      [
        '[Service]',
        'Environment=COPYTRADE_SECRET_KEY_FILE=%d/secret.key',
        'Environment=MALLOC_ARENA_MAX=2',
        'ExecStart=/usr/bin/node --max-semi-space-size=16 --no-warnings /opt/copytrade/bin/copytrade.js serve --port 1',
      ].join('\n'),
    );
    expect(r).toEqual({ nodeArgs: ['--max-semi-space-size=16', '--no-warnings'], env: { MALLOC_ARENA_MAX: '2' } });
    expect(describeRuntime(r)).toBe('MALLOC_ARENA_MAX=2 --max-semi-space-size=16 --no-warnings');
    expect(describeRuntime(parseUnit('ExecStart=/usr/bin/node /x.js serve'))).toBe('node defaults');
  });

  it('is what the shipped unit says, and compose starts node with the same flags', () => {
    const r = deployRuntime();
    expect(r.nodeArgs).toContain('--max-semi-space-size=16');
    expect(r.env.MALLOC_ARENA_MAX).toBe('2');
    const compose = readFileSync('deploy/compose.yaml', 'utf8');
    expect(compose).toContain(`exec node ${r.nodeArgs.join(' ')} bin/copytrade.js serve`);
    expect(compose).toContain(`MALLOC_ARENA_MAX: "${r.env.MALLOC_ARENA_MAX}"`);
  });

  afterEach(() => vi.unstubAllEnvs());

  it('is what a bench starts its service with, then BENCH_CHILD_ARGS; BENCH_RUNTIME=bare drops the unit', () => {
    vi.stubEnv('BENCH_CHILD_ARGS', '--cpu-prof  --cpu-prof-dir=/tmp/x');
    vi.stubEnv('BENCH_RUNTIME', '');
    expect(serviceRuntime()).toEqual({
      nodeArgs: [...deployRuntime().nodeArgs, '--cpu-prof', '--cpu-prof-dir=/tmp/x'],
      env: deployRuntime().env,
    });
    vi.stubEnv('BENCH_RUNTIME', 'bare');
    expect(serviceRuntime()).toEqual({ nodeArgs: ['--cpu-prof', '--cpu-prof-dir=/tmp/x'], env: {} });
  });
});
