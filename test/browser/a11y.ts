import axe from 'axe-core';
import type { BrowserContext, Page } from 'playwright-core';
import type { Harness } from './harness.js';

const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core's WCAG 2.1 A/AA findings on the page as it is now, one line each (rule, impact, help, where). */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source);
  const found = (await page.evaluate(
    (tags) =>
      (window as unknown as { axe: { run: (c: unknown, o: unknown) => Promise<{ violations: unknown[] }> } }).axe
        .run(document, { runOnly: { type: 'tag', values: tags } })
        .then((r) => r.violations),
    WCAG,
  )) as Violation[];
  return found.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A phone-sized browser context (390 x 844, touch) on the harness's service. */
export function phoneContext(h: Harness): Promise<BrowserContext> {
  return h.browser.newContext({
    baseURL: h.svc.baseUrl,
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
  });
}

/** How wide the page is against the screen: a page wider than its screen scrolls sideways. */
export function pageWidth(page: Page): Promise<{ scroll: number; width: number }> {
  return page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
}
