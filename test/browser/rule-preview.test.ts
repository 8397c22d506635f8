import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Page } from 'playwright-core';
import { shot, signIn, startHarness, type Harness } from './harness.js';

/** The rule form's Preview: a changed multiplier replayed over the demo's copies, shown as a diff table; nothing saved. */
describe('rule preview in the dashboard', { timeout: 90_000 }, () => {
  let h: Harness;
  let page: Page;
  let key: string;
  const v1 = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${h.svc.v1BaseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: r.status, body: (await r.json()) as any };
  };

  beforeAll(async () => {
    h = await startHarness();
    ({ page } = await h.newPage());
    key = h.svc.demo!.apiKey;
    const { accounts } = (await v1('GET', '/v1/accounts')).body as { accounts: Array<any> };
    const master = accounts.find((a) => a.name === 'Demo Master');
    const slave = accounts.find((a) => a.name === 'Demo Slave 1 (x1)');
    for (const volume of [0.1, 0.3]) {
      const r = await v1('POST', `/v1/accounts/${master.id}/orders`, { symbol: 'EURUSD', side: 'buy', volume });
      expect(r.status).toBe(202);
    }
    await vi.waitFor(
      async () => {
        const n = (await v1('GET', `/v1/accounts/${slave.id}/positions`)).body.positions.length;
        if (n < 2) throw new Error(`the Slave holds ${n} copies`);
      },
      { timeout: 30_000, interval: 100 },
    );
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('shows what a multiplier of 2 would have done, copy by copy, and saves nothing', async () => {
    await signIn(page, h.svc.demo!.email, h.svc.demo!.password);
    await page.getByRole('link', { name: 'Copier groups' }).click();
    const row = page.locator('li').filter({ hasText: 'Demo Slave 1 (x1)' });
    await row.getByRole('button', { name: 'Edit rule' }).click();
    const form = row.getByRole('form', { name: 'Copy rule' });
    await form.getByLabel('Multiplier').fill('2');
    await form.getByRole('button', { name: 'Preview' }).click();
    const table = form.getByTestId('rule-preview-table');
    await table.waitFor();
    const done = await table.locator('td[data-col="done"]').allTextContents();
    const candidate = await table.locator('td[data-col="candidate"]').allTextContents();
    expect(done.sort()).toEqual(['0.1', '0.3']);
    expect(candidate.sort()).toEqual(['0.2', '0.6']);
    await expect(form.getByTestId('rule-preview').textContent()).resolves.toContain('2 copies, 2 would change');
    await shot(page, 'rule-preview');
    // A preview is not a save: the rule in place is still x1.
    const { groups } = (await v1('GET', '/v1/copier-groups')).body as { groups: Array<any> };
    const slave = groups.flatMap((g) => g.slaves).find((s: any) => s.name === 'Demo Slave 1 (x1)');
    expect(slave.rule.sizing).toEqual({ mode: 'multiplier', multiplier: 1 });
  });
});
