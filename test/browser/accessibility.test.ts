import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, pageWidth, phoneContext } from './a11y.js';
import { shot, signIn, startHarness, type Harness } from './harness.js';

/**
 * Issue 49, item 6: every page of the dashboard checked in the browser with axe-core (WCAG 2.1 A and AA: contrast,
 * names, labels, landmarks), reached by keyboard alone, and laid out at a phone's width without sideways
 * scrolling of the page (a wide table scrolls inside its own box). A phone-sized screenshot of each page is kept.
 */
describe('dashboard accessibility and phone layout (issue 49, item 6)', { timeout: 180_000 }, () => {
  let h: Harness;
  let pages: Array<{ name: string; path: string; heading: RegExp }>;

  beforeAll(async () => {
    h = await startHarness();
    const master = (await h.svc.store.accounts.all()).find((a) => a.name === 'Demo Master')!;
    pages = [
      { name: 'accounts', path: '/', heading: /^Accounts$/ },
      { name: 'account', path: `/accounts/${master.id}`, heading: /Demo Master/ },
      { name: 'groups', path: '/groups', heading: /^Copier groups$|^Groups$/ },
      { name: 'service-levels', path: `/groups/${master.groupId}/service-levels`, heading: /^Service levels/ },
      { name: 'trades', path: '/trades', heading: /^Trades and copy ledger$/ },
      { name: 'history', path: '/history', heading: /^History$/ },
      { name: 'alerts', path: '/alerts', heading: /^Alerts$/ },
      { name: 'connect', path: '/connect', heading: /Connect/ },
      { name: 'connect-metatrader', path: '/connect/platforma', heading: /MetaTrader/ },
      { name: 'connect-tradelocker', path: '/connect/platformb', heading: /TradeLocker/ },
      { name: 'connect-ctrader', path: '/connect/platformc', heading: /cTrader/ },
      { name: 'developer', path: '/developer', heading: /Developer/ },
      { name: 'not-found', path: '/no-such-page', heading: /not found/i },
    ];
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  async function visit(page: Page, path: string, heading: RegExp): Promise<void> {
    await page.goto(path);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    // Lists fill in after the first paint: check the page as a user reads it, not its loading state.
    await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null);
  }

  it('the sign-in page and every page after it pass axe-core (WCAG 2.1 AA)', async () => {
    const { page } = await h.newPage();
    await page.goto('/');
    await page.getByLabel('Email').waitFor();
    const problems = (await axeViolations(page)).map((v) => `sign-in: ${v}`);
    await signIn(page, h.svc.demo!.email, h.svc.demo!.password);
    for (const p of pages) {
      await visit(page, p.path, p.heading);
      problems.push(...(await axeViolations(page)).map((v) => `${p.name}: ${v}`));
    }
    expect(problems).toEqual([]);
  });

  it('is usable by keyboard alone: a skip link first, then every page of the menu, each opened with Enter', async () => {
    const { page } = await h.newPage();
    await signIn(page, h.svc.demo!.email, h.svc.demo!.password);
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    await page.locator('body').focus();
    const focused = () =>
      page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        return {
          tag: el?.tagName ?? '',
          text: (el?.textContent ?? '').trim(),
          outline: el ? getComputedStyle(el).outlineStyle : '',
        };
      });
    await page.keyboard.press('Tab');
    expect((await focused()).text).toMatch(/skip/i);
    const menu = (await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents()).map((t) =>
      t.trim(),
    );
    expect(menu).toContain('Alerts');
    const reached: string[] = [];
    for (let i = 0; i < 25 && reached.length < menu.length; i++) {
      await page.keyboard.press('Tab');
      const f = await focused();
      if (f.tag === 'A' && menu.includes(f.text) && !reached.includes(f.text)) {
        // The focused link shows it is focused.
        expect(f.outline, `${f.text} has no visible focus`).not.toBe('none');
        reached.push(f.text);
      }
    }
    expect(reached).toEqual(menu);
    // Shift+Tab back to History and open it with Enter.
    while ((await focused()).text !== 'History') await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'History' }).waitFor();
  });

  it("lays out each page at a phone's width without sideways scrolling, and keeps a screenshot of each", async () => {
    const context = await phoneContext(h);
    try {
      const page = await context.newPage();
      await signIn(page, h.svc.demo!.email, h.svc.demo!.password);
      const wide: string[] = [];
      for (const p of pages) {
        await visit(page, p.path, p.heading);
        const { scroll, width } = await pageWidth(page);
        if (scroll > width + 1) wide.push(`${p.name}: ${scroll}px wide in a ${width}px screen`);
        await shot(page, `phone-${p.name}`);
      }
      expect(wide).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
