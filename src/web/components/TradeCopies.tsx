import type { Account, Trade } from '../api/types';
import { latencyPhases, latencyTotal, ms, num, signed } from '../lib/format';
import { Badge } from './Badge';
import { describeReason } from '../lib/reasons';

/** A trade's ledger: per Slave the outcome, volumes, fill, slippage, latency, or the reason it was skipped. */
export function TradeCopies({ trade, accounts }: { trade: Trade; accounts: Account[] }) {
  // A removed account is no longer listed; the ledger row still carries its name.
  const name = (id: string, kept?: string) =>
    accounts.find((a) => a.id === id)?.name ?? (kept ? `${kept} (removed)` : 'a removed account');
  if (trade.copies.length === 0)
    return (
      <p className="muted" data-testid="no-copies">
        {whyNoCopies(trade)}
      </p>
    );
  return (
    <div className="table-wrap">
      <table className="ledger" data-testid="ledger">
        <caption className="sr-only">Copies of trade {trade.tradeId}</caption>
        <thead>
          <tr>
            <th>Slave</th>
            <th>Outcome</th>
            <th>Side</th>
            <th className="num">Planned</th>
            <th className="num">Filled</th>
            <th className="num">Fill price</th>
            <th
              className="num"
              title="The copy's fill price minus the Master's, in price units, signed so that + is worse for the Slave (paid more on a buy, got less on a sell) and − is better"
            >
              Slippage
            </th>
            <th className="num">Latency</th>
            <th>Reason / broker answer</th>
          </tr>
        </thead>
        <tbody>
          {trade.copies.map((c) => {
            const lat = latencyTotal(c.latencyMs);
            const answer = c.brokerAnswer as { code?: string; message?: string } | null;
            return (
              <tr key={c.intentId} data-outcome={c.outcome}>
                <td>{name(c.accountId, c.accountName)}</td>
                <td>
                  <Badge value={c.outcome} />
                </td>
                <td>
                  {c.side}
                  {c.symbol !== trade.symbol ? ` ${c.symbol}` : ''}
                </td>
                <td className="num">{num(c.plannedVolume)}</td>
                <td className="num">{num(c.filledVolume)}</td>
                <td className="num">{num(c.fillPrice)}</td>
                <td className={`num ${(c.slippage ?? 0) > 0 ? 'bad' : ''}`}>{signed(c.slippage)}</td>
                <td className="num" title={latencyPhases(c.latencyMs)}>
                  {ms(lat)}
                </td>
                <td className="small" title={c.skipReason ?? answer?.code ?? undefined}>
                  {c.skipReason
                    ? describeReason(c.skipReason).text
                    : answer && (answer.code || answer.message)
                      ? describeReason(answer.message ? `${answer.code ?? 'refused'}: ${answer.message}` : answer.code!)
                          .text
                      : ''}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p className="muted small legend-note" data-testid="slippage-legend">
        Slippage: the copy's fill price minus the Master's, in price units of the symbol; <strong>+</strong> is worse
        for the Slave (it paid more on a buy, got less on a sell), <strong>−</strong> is better.
      </p>
    </div>
  );
}

/** An empty ledger has a reason: the Master's broker refused, its answer is not known yet, or no Slave qualified. */
function whyNoCopies(trade: Trade): string {
  const m = (trade.master?.outcome ?? null) as { kind?: string; code?: string; message?: string } | null;
  const reason = m?.message ?? m?.code ?? null;
  if (trade.status === 'rejected')
    return `Nothing was copied: the Master's broker refused the order${reason ? `: ${reason}` : ''}.`;
  if (trade.status === 'unresolved' || trade.status === 'pending')
    return "Nothing copied yet: the Master's broker has not confirmed the order; the service is checking it.";
  return 'No copies: no Slave of the group was eligible for this trade.';
}
