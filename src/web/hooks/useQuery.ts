import { useCallback, useEffect, useRef, useState } from 'react';
import { useLive } from './live';

export interface Query<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

/**
 * Loads `fn` now, again when `deps` change, and (with live) on every live tick. The last good data stays on
 * screen while a reload runs or fails; answers that arrive out of order are dropped.
 */
export function useQuery<T>(
  fn: () => Promise<T>,
  deps: unknown[],
  opts: { live?: boolean; enabled?: boolean } = {},
): Query<T> {
  const { live = false, enabled = true } = opts;
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(enabled);
  const seq = useRef(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const { tick } = useLive();

  const reload = useCallback(async () => {
    const n = ++seq.current;
    try {
      const d = await fnRef.current();
      if (n === seq.current) {
        setData(d);
        setError(null);
      }
    } catch (err) {
      if (n === seq.current) setError(err);
    } finally {
      if (n === seq.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    if (!enabled) return;
    setLoading(true);
    void reload();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [enabled, reload, ...deps]);

  useEffect(() => {
    if (live && enabled && tick > 0) void reload();
  }, [tick, live, enabled, reload]);

  return { data, error, loading, reload };
}
