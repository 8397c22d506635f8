import { describe, expect, it, vi } from 'vitest';
import { SimBroker } from '../broker.js';
import { accountByCtid, ctidOf } from './ids.js';

describe('accountByCtid', () => {
  it('finds accounts by ctid without listing every account per lookup (10,000 authorisations)', () => {
    const broker = new SimBroker();
    const ids: string[] = [];
    for (let i = 0; i < 2_000; i++) ids.push(ctidOf(broker.createAccount({ balance: 1_000 })));
    const listed = vi.spyOn(broker, 'accounts');
    for (const ctid of ids) expect(ctidOf(accountByCtid(broker, ctid)!)).toBe(ctid);
    // One listing builds the index; before, each lookup copied and scanned the whole list (41 ms at 10,000).
    expect(listed.mock.calls.length).toBeLessThanOrEqual(1);
  });

  it('finds an account opened after the index was built, and none for an unknown ctid', () => {
    const broker = new SimBroker();
    const first = broker.createAccount({ balance: 1_000 });
    expect(accountByCtid(broker, ctidOf(first))?.id).toBe(first.id);
    const later = broker.createAccount({ balance: 1_000, meta: { ctidTraderAccountId: '777000111' } });
    expect(accountByCtid(broker, '777000111')?.id).toBe(later.id);
    expect(accountByCtid(broker, '123')).toBeNull();
  });
});
