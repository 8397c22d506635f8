interface ChainRow {
  trade: { id: string; masterPositionId: string | null; masterOrderId: string | null };
}

/**
 * One Slave's unsettled rows as chains that may be settled side by side. On a hedging account, one chain per
 * Master position: a pending order's rows name its order, its fill and later changes name the position, so rows
 * sharing any of trade, order or position id join one chain (a small union-find), and each chain keeps the list's
 * order (open, changes, close). Writes about different positions touch nothing in common. On a netting account
 * every write moves the one net position: a single chain.
 *
 * Seen: a 200-order burst left ~80 timed-out opens per TradeLocker Slave; resent one after another under load,
 * they took longer than the rule's 60 s staleness limit and were refused as stale.
 */
export function settleChains<R extends ChainRow>(list: R[], hedging: boolean): R[][] {
  if (!hedging || list.length < 2) return list.length ? [list] : [];
  const parent = list.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const owner = new Map<string, number>();
  list.forEach((r, i) => {
    const ids = [
      ['p', r.trade.masterPositionId],
      ['o', r.trade.masterOrderId],
      ['t', r.trade.id],
    ] as const;
    for (const [kind, value] of ids) {
      if (!value) continue;
      const j = owner.get(`${kind}:${value}`);
      if (j === undefined) owner.set(`${kind}:${value}`, i);
      else parent[root(i)] = root(j);
    }
  });
  const chains = new Map<number, R[]>();
  list.forEach((r, i) => {
    chains.set(root(i), [...(chains.get(root(i)) ?? []), r]);
  });
  return [...chains.values()];
}
