import { useState, type FormEvent } from 'react';
import { closePosition, modifyPosition } from '../api/actions';
import type { Position } from '../api/types';
import { num } from '../lib/format';
import { Alert } from './Alert';
import { Modal } from './Modal';

/** Close one position (fully or partly) or set its stop loss and take profit. */
export function PositionActions({
  accountId,
  position,
  onDone,
}: {
  accountId: string;
  position: Position;
  onDone: () => void;
}) {
  const [open, setOpen] = useState<'close' | 'levels' | null>(null);
  const label = `${position.symbol} ${position.side} ${num(position.volume)}`;
  return (
    <>
      <button
        type="button"
        className="btn btn-small"
        onClick={() => setOpen('levels')}
        aria-label={`Edit SL/TP of ${label}`}
      >
        SL/TP
      </button>{' '}
      <button
        type="button"
        className="btn btn-small btn-danger"
        onClick={() => setOpen('close')}
        aria-label={`Close ${label}`}
      >
        Close
      </button>
      {open === 'close' && (
        <CloseDialog
          accountId={accountId}
          position={position}
          label={label}
          onClose={() => setOpen(null)}
          onDone={() => {
            setOpen(null);
            onDone();
          }}
        />
      )}
      {open === 'levels' && (
        <LevelsDialog
          accountId={accountId}
          position={position}
          label={label}
          onClose={() => setOpen(null)}
          onDone={() => {
            setOpen(null);
            onDone();
          }}
        />
      )}
    </>
  );
}

function useSubmit(onDone: () => void) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, submit };
}

function CloseDialog({
  accountId,
  position,
  label,
  onClose,
  onDone,
}: {
  accountId: string;
  position: Position;
  label: string;
  onClose: () => void;
  onDone: () => void;
}) {
  const [volume, setVolume] = useState(String(position.volume));
  const { error, busy, submit } = useSubmit(onDone);
  const go = (e: FormEvent) => {
    e.preventDefault();
    const v = Number(volume);
    void submit(() => closePosition(accountId, position.id, v >= position.volume ? undefined : v));
  };
  return (
    <Modal title={`Close ${label}`} onClose={onClose} busy={busy}>
      <form onSubmit={go} aria-label={`Close ${label}`}>
        <label>
          Volume to close (lots)
          <input
            type="number"
            inputMode="decimal"
            step="any"
            min="0"
            max={position.volume}
            value={volume}
            onChange={(e) => setVolume(e.target.value)}
            required
          />
        </label>
        <p className="muted small">
          All of it closes the position; less closes part. On a Master the change is copied to its Slaves.
        </p>
        <Alert error={error} />
        <div className="actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-danger" disabled={busy}>
            Close at market
          </button>
        </div>
      </form>
    </Modal>
  );
}

function LevelsDialog({
  accountId,
  position,
  label,
  onClose,
  onDone,
}: {
  accountId: string;
  position: Position;
  label: string;
  onClose: () => void;
  onDone: () => void;
}) {
  const [sl, setSl] = useState(position.stopLoss === null ? '' : String(position.stopLoss));
  const [tp, setTp] = useState(position.takeProfit === null ? '' : String(position.takeProfit));
  const { error, busy, submit } = useSubmit(onDone);
  const level = (s: string) => (s.trim() === '' ? null : Number(s));
  const go = (e: FormEvent) => {
    e.preventDefault();
    void submit(() => modifyPosition(accountId, position.id, { stopLoss: level(sl), takeProfit: level(tp) }));
  };
  return (
    <Modal title={`Stop loss and take profit of ${label}`} onClose={onClose} busy={busy}>
      <form onSubmit={go} aria-label={`SL/TP of ${label}`}>
        <label>
          Stop loss{' '}
          <input
            type="number"
            inputMode="decimal"
            step="any"
            min="0"
            value={sl}
            onChange={(e) => setSl(e.target.value)}
            placeholder="none"
          />
        </label>
        <label>
          Take profit{' '}
          <input
            type="number"
            inputMode="decimal"
            step="any"
            min="0"
            value={tp}
            onChange={(e) => setTp(e.target.value)}
            placeholder="none"
          />
        </label>
        <p className="muted small">Empty removes a level. Both are sent, so the one you leave as it is stays.</p>
        <Alert error={error} />
        <div className="actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            Save levels
          </button>
        </div>
      </form>
    </Modal>
  );
}
