import { useState, type FormEvent } from 'react';
import { app, must } from '../api/client';
import type { Account, OrderResponse } from '../api/types';
import { num } from '../lib/format';
import { Link } from '../lib/router';
import { Alert } from './Alert';

/** Sends an order to a Master; copy rules distribute it to its Slaves (202 accepted is not filled). */
export function SendOrderForm({
  masters,
  defaultAccountId,
  onSent,
}: {
  masters: Account[];
  defaultAccountId?: string;
  onSent?: (r: OrderResponse) => void;
}) {
  const [accountId, setAccountId] = useState(defaultAccountId ?? masters[0]?.id ?? '');
  const [symbol, setSymbol] = useState('EURUSD');
  const [side, setSide] = useState<'buy' | 'sell'>('buy');
  const [type, setType] = useState<'market' | 'limit' | 'stop'>('market');
  const [volume, setVolume] = useState('0.1');
  const [price, setPrice] = useState('');
  const [stopLoss, setStopLoss] = useState('');
  const [takeProfit, setTakeProfit] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<OrderResponse | null>(null);

  const n = (s: string) => (s.trim() === '' ? undefined : Number(s));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setResult(null);
    const v = Number(volume);
    if (!(v > 0)) return setError(new Error('The volume must be a number above 0.'));
    if (type !== 'market' && !(Number(price) > 0)) return setError(new Error('A limit or stop order needs a price.'));
    setBusy(true);
    try {
      const body = {
        symbol: symbol.trim().toUpperCase(),
        side,
        volume: v,
        type,
        ...(type !== 'market' ? { price: n(price) } : {}),
        ...(n(stopLoss) ? { stopLoss: n(stopLoss) } : {}),
        ...(n(takeProfit) ? { takeProfit: n(takeProfit) } : {}),
      };
      const r = await must(
        app.POST('/v1/accounts/{account_id}/orders', { params: { path: { account_id: accountId } }, body }),
      );
      setResult(r);
      onSent?.(r);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (masters.length === 0)
    return (
      <p className="muted">
        No Master account: assign one in <Link to="/groups">Copier groups</Link> to send orders.
      </p>
    );
  return (
    <form className="form-grid" onSubmit={(e) => void submit(e)} aria-label="Send an order">
      <label>
        Master
        <select value={accountId} onChange={(e) => setAccountId(e.target.value)} name="master">
          {masters.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Symbol
        <input name="symbol" value={symbol} onChange={(e) => setSymbol(e.target.value)} required maxLength={32} />
      </label>
      <fieldset className="segmented">
        <legend>Side</legend>
        {(['buy', 'sell'] as const).map((s) => (
          <label key={s}>
            <input type="radio" name="side" value={s} checked={side === s} onChange={() => setSide(s)} />
            {s}
          </label>
        ))}
      </fieldset>
      <label>
        Type
        <select name="type" value={type} onChange={(e) => setType(e.target.value as typeof type)}>
          <option value="market">market</option>
          <option value="limit">limit</option>
          <option value="stop">stop</option>
        </select>
      </label>
      <label>
        Volume (lots)
        <input name="volume" inputMode="decimal" value={volume} onChange={(e) => setVolume(e.target.value)} required />
      </label>
      {type !== 'market' && (
        <label>
          Price
          <input name="price" inputMode="decimal" value={price} onChange={(e) => setPrice(e.target.value)} required />
        </label>
      )}
      <label>
        Stop loss
        <input
          name="stopLoss"
          inputMode="decimal"
          value={stopLoss}
          onChange={(e) => setStopLoss(e.target.value)}
          placeholder="optional"
        />
      </label>
      <label>
        Take profit
        <input
          name="takeProfit"
          inputMode="decimal"
          value={takeProfit}
          onChange={(e) => setTakeProfit(e.target.value)}
          placeholder="optional"
        />
      </label>
      <div className="form-actions">
        <button type="submit" className={`btn ${side === 'buy' ? 'btn-buy' : 'btn-sell'}`} disabled={busy}>
          {busy ? 'Sending…' : `${side === 'buy' ? 'Buy' : 'Sell'} ${volume} ${symbol}`}
        </button>
      </div>
      <div className="span-all">
        <Alert error={error} title="Order not sent" />
        {result && (
          <div className="alert alert-good" role="status" data-testid="order-result">
            Trade <code>{result.tradeId}</code> {result.status}
            {result.fillPrice !== null ? ` at ${num(result.fillPrice)}` : ''}; copied to {result.copiedTo} Slave
            {result.copiedTo === 1 ? '' : 's'}. Accepted is not filled: follow each copy in the ledger below.
          </div>
        )}
      </div>
    </form>
  );
}
