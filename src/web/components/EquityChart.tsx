import { useEffect, useState } from 'react';
import type { Account } from '../api/types';
import { equityHistory, onEquityChange } from '../lib/equity-history';
import { LineChart } from './LineChart';

/** Equity per account over the time this dashboard has been open (sampled from the account list). */
export function EquityChart({ accounts }: { accounts: Account[] }) {
  const [, bump] = useState(0);
  useEffect(() => onEquityChange(() => bump((n) => n + 1)), []);
  const h = equityHistory();
  const series = accounts.map((a) => ({ name: a.name, points: (h[a.id] ?? []).map((s) => ({ t: s.t, v: s.equity })) })).filter((s) => s.points.length > 0);
  return <LineChart series={series} label={`Equity over time of ${accounts.length === 1 ? accounts[0]!.name : `${accounts.length} accounts`}`} />;
}
