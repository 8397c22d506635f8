import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { loadConfig } from '../../src/config/config.js';
import { startService, type Service } from '../../src/main.js';
import { resolveChromium, type ChromiumChoice } from './chromium.js';

/** Chosen once per test process: CHROMIUM_PATH, else Debian's, else the npm-shipped one (see chromium.ts). */
export const CHROMIUM: ChromiumChoice = resolveChromium();

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Screenshots go to docs/screenshots with SCREENSHOTS=1 (to refresh the README's), else to test-results/. */
export const SHOT_DIR =
  process.env.SCREENSHOTS === '1' ? join(root, 'docs', 'screenshots') : join(root, 'test-results', 'screenshots');

export interface Harness {
  svc: Service;
  browser: Browser;
  dataDir: string;
  newPage(): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

/**
 * The service in demo mode on port 0 with a temp data dir, in process, and a headless Chromium; `env` is the service's
 * environment (e.g. a shorter evaluator interval).
 */
export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ct-browser-'));
  // Without the demo's bridge Slave unless COPYTRADE_DEMO_BRIDGE=1: these tests count and close the demo group's
  // accounts, written before it (test/demo/bridge-demo.test.ts covers it; the dashboard and accessibility tests
  // passed with it on too, run together at load 15).
  env = { COPYTRADE_DEMO_BRIDGE: process.env.COPYTRADE_DEMO_BRIDGE ?? '0', ...env };
  const svc = await startService(loadConfig({ dataDir, port: '0', demo: true }, env), false);
  const browser = await chromium.launch({ executablePath: CHROMIUM.path, headless: true, args: CHROMIUM.args });
  const contexts: BrowserContext[] = [];
  return {
    svc,
    browser,
    dataDir,
    async newPage() {
      const context = await browser.newContext({
        baseURL: svc.baseUrl,
        viewport: { width: 1280, height: 860 },
        colorScheme: 'light',
      });
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      page.on('pageerror', (err) => console.error('[page error]', err.message));
      return { context, page };
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await svc.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').filter({ hasText: email }).waitFor();
}

export async function shot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(SHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SHOT_DIR, `${name}.png`), fullPage: opts.fullPage ?? true });
}

let n = 0;
/** A fresh user (the connection routes allow 3 calls per 5 minutes per user). */
export async function freshUser(svc: Service, tag: string): Promise<{ id: string; email: string; password: string }> {
  const email = `${tag}-${Date.now()}-${++n}@copytrade.test`;
  const password = `pw-${tag}-${n}-secret`;
  const u = await svc.deps.auth.createUser(email, password);
  return { id: u.id, email, password };
}
