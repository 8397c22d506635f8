import { describe, expect, it } from 'vitest';
import { Decimal } from '../decimal.js';
import { canonicalJson } from './canonical.js';
import { firstChainFault, GENESIS, receiptHash, type StoredReceipt } from './chain.js';

function chain(n: number, account = 'acc_1'): StoredReceipt[] {
  const out: StoredReceipt[] = [];
  let prev = GENESIS;
  for (let seq = 1; seq <= n; seq++) {
    const body = canonicalJson({ account, seq, day: '2026-12-07', request: { plannedVolume: new Decimal('0.1') } });
    const hash = receiptHash(prev, body);
    out.push({ id: `rcp_${seq}`, accountId: account, seq, day: '2026-12-07', prevHash: prev, hash, body });
    prev = hash;
  }
  return out;
}

describe('canonical JSON', () => {
  it('sorts keys, writes decimals and dates as strings, drops undefined, refuses non-finite numbers', () => {
    expect(
      canonicalJson({ b: 1, a: new Decimal('0.10'), c: undefined, d: new Date(Date.UTC(2026, 0, 2)), e: [null] }),
    ).toBe('{"a":"0.1","b":1,"d":"2026-01-02T00:00:00.000Z","e":[null]}');
    expect(canonicalJson({ ms: 8.167 })).toBe('{"ms":8.167}');
    expect(() => canonicalJson({ v: Number.NaN })).toThrow(/finite/);
  });
});

describe('receipt chain', () => {
  it('holds as written', () => {
    expect(firstChainFault(chain(5), null)).toBeNull();
  });

  it('names the receipt whose bytes were edited', () => {
    const c = chain(5);
    c[2] = { ...c[2]!, body: c[2]!.body.replace('"0.1"', '"0.2"') };
    expect(firstChainFault(c, null)).toMatchObject({
      receiptId: 'rcp_3',
      seq: 3,
      problem: expect.stringMatching(/edited/),
    });
  });

  it('names the place of a deleted receipt', () => {
    const c = chain(5);
    c.splice(1, 1);
    expect(firstChainFault(c, null)).toMatchObject({ seq: 2, problem: expect.stringMatching(/#2 is missing/) });
  });

  it('names an inserted receipt, even one rehashed to look right on its own', () => {
    const c = chain(5);
    const body = canonicalJson({ account: 'acc_1', seq: 3, day: '2026-12-07', forged: true });
    const forged = { ...c[2]!, id: 'rcp_forged', body, hash: receiptHash(c[1]!.hash, body) };
    c.splice(2, 0, forged);
    // The forged receipt links and hashes, so the one after it no longer fits.
    expect(firstChainFault(c, null)).toMatchObject({ receiptId: 'rcp_3', problem: expect.stringMatching(/inserted/) });
    // Renumbered to fit, the one after it no longer links.
    const renumbered = [...c.slice(0, 3), ...c.slice(3).map((r) => ({ ...r, seq: r.seq + 1 }))];
    expect(firstChainFault(renumbered, null)).toMatchObject({ receiptId: 'rcp_3' });
  });

  it('refuses a receipt moved to another account or place', () => {
    const c = chain(3);
    const other = chain(3, 'acc_2');
    expect(firstChainFault([c[0]!, { ...other[1]!, accountId: 'acc_1' }], null)).toMatchObject({ seq: 2 });
  });

  it('checks a run against the receipt before it', () => {
    const c = chain(4);
    expect(firstChainFault(c.slice(2), { seq: 2, hash: c[1]!.hash })).toBeNull();
    expect(firstChainFault(c.slice(2), { seq: 2, hash: GENESIS })).toMatchObject({ receiptId: 'rcp_3' });
  });
});
