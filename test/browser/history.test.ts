import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Page } from 'playwright-core';
import { Decimal } from '../../src/domain/decimal.js';
import { shot, signIn, startHarness, type Harness } from './harness.js';

/**
 * The History page against the demo: a Master trade, copied and closed, shows on a TradeLocker follower with its
 * computed profit and the Master's scaled profit beside it; the statistics cards, the chart and the CSV download.
 */
describe('history page', { timeout: 90_000 }, () => {
  let h: Harness;
  let page: Page;
  let slaveId: string;

  beforeAll(async () => {
    h = await startHarness();
    ({ page } = await h.newPage());
    const all = await h.svc.store.accounts.all();
    const master = all.find((a) => a.name === 'Demo Master')!;
    slaveId = all.find((a) => a.name === 'Demo B Slave 2 (x2)')!.id;
    h.svc.broker.setPrice('EURUSD', '1.10000');
    const p = h.svc.broker.placeOrder(master.brokerAccountId, {
      symbol: 'EURUSD',
      side: 'buy',
      type: 'market',
      volume: new Decimal('0.1'),
      tag: 'browser-hist',
    }).position!;
    const copies = async () => (await h.svc.store.accounts.openCopies(slaveId)).asSlave;
    const copiesAre = (n: number) =>
      vi.waitFor(
        async () => {
          if ((await copies()) !== n) throw new Error(`not ${n} open copies yet`);
        },
        { timeout: 20_000, interval: 50 },
      );
    await copiesAre(1);
    h.svc.broker.setPrice('EURUSD', '1.10300');
    h.svc.broker.closePosition(master.brokerAccountId, p.id);
    await copiesAre(0);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it("shows a follower's closed trade, its statistics and the Master's scaled profit; downloads CSV", async () => {
    await signIn(page, h.svc.demo!.email, h.svc.demo!.password);
    await page.getByRole('link', { name: 'History' }).click();
    await page.getByRole('heading', { name: 'History' }).waitFor();
    await page.getByLabel('Account').selectOption(slaveId);
    const table = page.getByTestId('history-table');
    await table.waitFor();
    const row = table.locator('tbody tr').first();
    // The table of the account shown before the choice can still be there: wait for the follower's own row
    // (TradeLocker's executions carry no profit, so it is computed; the copy is twice the Master's 0.1 lot).
    await expect.poll(() => row.textContent(), { timeout: 15_000, interval: 100 }).toContain('computed');
    await expect(row.textContent()).resolves.toContain('0.2');
    await expect(table.locator('thead').textContent()).resolves.toContain('Master, scaled');
    await expect(page.getByTestId('history-stats').textContent()).resolves.toMatch(/Win rate100\.0%/);
    await expect(page.getByTestId('history-stats').textContent()).resolves.toContain('Copy vs Master (scaled)');
    await expect(page.getByRole('img', { name: /Cumulative net realized profit/ }).count()).resolves.toBe(1);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`history-${slaveId}.csv`);
    await shot(page, 'history');
  });
});
