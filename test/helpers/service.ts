import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/config/logger.js';
import { startService, type Service } from '../../src/main.js';

export interface TestService extends Service {
  /** Every log line the service wrote (tests grep it for secrets). */
  logs: string[];
  call(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; body: any; text: string }>;
}

/** The whole service in-process on a random loopback port, in demo mode, on an in-memory store by default. */
export async function startTestService(
  opts: { dataDir?: string; env?: Record<string, string>; authClock?: () => number } = {},
): Promise<TestService> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  // Family V's rate limits are lifted unless a test sets them: a suite about something else must not fail
  // because a busy machine ran its requests within one window (test/api/rate-limits.test.ts tests the limits).
  const limits = { COPYTRADE_V1_WRITES_PER_WINDOW: '1000000', COPYTRADE_V1_READS_PER_WINDOW: '1000000' };
  const cfg = loadConfig(
    { dataDir: opts.dataDir ?? ':memory:', port: '0', demo: true },
    {
      ...process.env,
      COPYTRADE_BROKER_TIMEOUT_MS: '300',
      COPYTRADE_HEALTH_INTERVAL_MS: '0',
      // The demo's bridge account only where a test asks for it: the others count the demo group's Slaves.
      COPYTRADE_DEMO_BRIDGE: '0',
      DATABASE_URL: '',
      ...limits,
      ...(opts.env ?? {}),
    },
  );
  const svc = await startService(cfg, createLogger('info', sink), opts.authClock ? { authClock: opts.authClock } : {});
  return Object.assign(svc, {
    logs,
    async call(
      method: string,
      path: string,
      o: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
    ) {
      const headers: Record<string, string> = { accept: 'application/json', ...(o.headers ?? {}) };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | undefined;
      if (o.rawBody !== undefined) body = o.rawBody;
      else if (o.body !== undefined) body = JSON.stringify(o.body);
      if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
      const res = await fetch(svc.baseUrl + path, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
  });
}
