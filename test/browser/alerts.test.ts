import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { shot, signIn, startHarness, type Harness } from './harness.js';

/**
 * The Alerts page against the demo (no SMTP server: the demo-only inbox): the seeded channel's test message, a
 * refused copy alerting through the dispatcher, a rule turned off, and a Telegram channel's clear refusal.
 */
describe('alerts page', { timeout: 90_000 }, () => {
  let h: Harness;
  let page: Page;

  beforeAll(async () => {
    h = await startHarness();
    ({ page } = await h.newPage());
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('sends a test to the demo inbox, shows an alert for a refused copy, and turns a kind off', async () => {
    await signIn(page, h.svc.demo!.email, h.svc.demo!.password);
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
    const channels = page.getByRole('table', { name: 'Alert channels' });
    await expect.poll(() => channels.textContent()).toContain('Demo inbox (demo only');
    await page.getByRole('button', { name: 'Send a test' }).first().click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('sent (250)');
    const inbox = page.getByRole('list', { name: 'Demo inbox messages' });
    await expect.poll(() => inbox.textContent()).toContain('copytrade: test message');

    // A copy refused by a Slave's broker, as the engine records it: one alert after the gather delay (5 s).
    const user = (await h.svc.store.users.byEmail(h.svc.demo!.email))!;
    await h.svc.store.events.emit([
      {
        userId: user.id,
        accountId: 'acc_browser',
        type: 'copy.rejected',
        payload: {
          tradeId: 't',
          intentId: 'i',
          symbol: 'EURUSD',
          side: 'buy',
          volume: '0.10',
          code: 'NO_MONEY',
          message: 'not enough money',
        },
      },
    ]);
    await expect
      .poll(() => inbox.textContent(), { timeout: 30_000, interval: 250 })
      .toContain('copytrade: 1 copy refused');

    const rule = page.getByRole('checkbox', { name: "A Slave's broker refuses a copy" });
    expect(await rule.isChecked()).toBe(true);
    await rule.click();
    await expect.poll(() => rule.isChecked()).toBe(false);
    expect((await h.svc.deps.alerts.rules(user.id)).find((r) => r.kind === 'copy_rejected')!.enabled).toBe(false);

    // A Telegram channel without a chat id is refused with the server's words.
    await page.getByLabel('Channel kind').selectOption('telegram');
    await page.getByLabel('Bot token').fill('12345:short');
    await page.getByLabel('Chat id').fill('my chat');
    await page.getByRole('button', { name: 'Add channel' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('chatId must be a numeric chat id');
    await shot(page, 'alerts', { fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'alerts-phone', { fullPage: true });
  });
});
