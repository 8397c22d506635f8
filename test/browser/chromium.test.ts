import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { npmChromium, resolveChromium, SYSTEM_CHROMIUM } from './chromium.js';

/**
 * `npm ci && npm test` must pass on a machine with nothing installed by hand: without Debian's Chromium the browser
 * tests drive the one the npm package @sparticuz/chromium ships. That browser is launched here on every run, so the
 * fallback cannot rot on machines (CI's) that have Debian's.
 */
describe('the Chromium the browser tests drive', { timeout: 120_000 }, () => {
  const present = () => true;
  const absent = () => false;

  it('CHROMIUM_PATH wins over everything', () => {
    expect(
      resolveChromium({ CHROMIUM_PATH: '/opt/c/chrome', COPYTRADE_TEST_IGNORE_SYSTEM_CHROMIUM: '1' }, present),
    ).toMatchObject({ path: '/opt/c/chrome', source: 'env' });
  });

  it("Debian's when present", () => {
    expect(resolveChromium({}, present)).toMatchObject({ path: SYSTEM_CHROMIUM, source: 'system' });
  });

  it("the npm-shipped one when Debian's is absent or to be ignored", () => {
    const missing = resolveChromium({}, absent);
    expect(missing.source).toBe('npm');
    expect(existsSync(missing.path)).toBe(true);
    expect(resolveChromium({ COPYTRADE_TEST_IGNORE_SYSTEM_CHROMIUM: '1' }, present)).toEqual(missing);
    // The page must run under a user's browser's rules, and playwright owns headless mode.
    expect(missing.args).not.toContain('--disable-web-security');
    expect(missing.args).not.toContain('--single-process');
    expect(missing.args).toContain('--no-sandbox');
  });

  it('a damaged unpacked copy (binary gone, dir left) is unpacked again', () => {
    const cacheRoot = mkdtempSync(join(tmpdir(), 'ct-chromium-cache-'));
    try {
      const first = npmChromium(cacheRoot);
      expect(first.path.startsWith(cacheRoot)).toBe(true);
      rmSync(first.path);
      expect(npmChromium(cacheRoot).path).toBe(first.path);
      expect(statSync(first.path).size).toBeGreaterThan(50_000_000);
      expect(readdirSync(cacheRoot)).toEqual([basename(dirname(first.path))]); // no staging dir left behind
    } finally {
      rmSync(cacheRoot, { recursive: true, force: true });
    }
  });

  it('the npm-shipped one launches headless here and runs a page', async () => {
    const { path, args } = npmChromium();
    const browser = await chromium.launch({ executablePath: path, headless: true, args });
    try {
      const page = await browser.newPage();
      await page.setContent('<p id="x">copytrade</p><script>document.title = String(6 * 7)</script>');
      expect(await page.title()).toBe('42');
      expect(await page.locator('#x').textContent()).toBe('copytrade');
      expect(browser.version()).toMatch(/^\d+\./);
    } finally {
      await browser.close();
    }
  });
});
