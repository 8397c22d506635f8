import type { Trade } from '../api/types';
import { latencyTotal, ms } from '../lib/format';
import { BarChart } from './BarChart';

/** Copy latency per trade: the slowest Slave's latency (sum of the ledger's phases), oldest trade first. */
export function LatencyChart({ trades }: { trades: Trade[] }) {
  const bars = [...trades].reverse().flatMap((t) => {
    const lats = t.copies.map((c) => latencyTotal(c.latencyMs)).filter((x): x is number => x !== null);
    if (lats.length === 0) return [];
    const max = Math.max(...lats);
    const median = [...lats].sort((a, b) => a - b)[Math.floor(lats.length / 2)]!;
    return [
      {
        key: t.tradeId,
        label: new Date(t.createdAt).toLocaleTimeString('en-GB'),
        value: max,
        hint: `${t.side} ${t.volume} ${t.symbol}, median ${ms(median)}, ${lats.length} copies`,
      },
    ];
  });
  return <BarChart bars={bars} label={`Copy latency per trade (slowest Slave), ${bars.length} trades`} format={ms} />;
}
