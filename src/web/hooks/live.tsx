import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { accessToken, saveSession } from '../lib/session';

/**
 * Live updates. The dashboard listens to the service's event stream (/app/v1/events/stream, server-sent
 * events read through fetch so the access token goes in a header) when the service has one; otherwise, or
 * while it is down, it polls every 2 s. Pages refetch on every `tick`.
 */
export type LiveMode = 'connecting' | 'stream' | 'poll';
interface Live {
  tick: number;
  mode: LiveMode;
  lastEvent: string | null;
}
const LiveContext = createContext<Live>({ tick: 0, mode: 'poll', lastEvent: null });

export const POLL_MS = 2000;
const STREAM_SAFETY_MS = 10_000;
const STREAM_PATH = '/app/v1/events/stream';

export function LiveProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<Live>({ tick: 0, mode: 'connecting', lastEvent: null });
  const mode = useRef<LiveMode>('connecting');

  useEffect(() => {
    let stopped = false;
    const ctrl = new AbortController();
    let pending: number | null = null;
    const bump = (lastEvent: string | null = null) => {
      if (pending !== null) return;
      pending = window.setTimeout(() => {
        pending = null;
        if (!stopped) setState((s) => ({ tick: s.tick + 1, mode: mode.current, lastEvent: lastEvent ?? s.lastEvent }));
      }, 250);
    };
    const setMode = (m: LiveMode) => {
      mode.current = m;
      setState((s) => ({ ...s, mode: m }));
    };

    const timer = window.setInterval(() => {
      if (document.hidden) return;
      if (mode.current !== 'stream') bump();
    }, POLL_MS);
    const safety = window.setInterval(() => {
      if (!document.hidden && mode.current === 'stream') bump();
    }, STREAM_SAFETY_MS);

    const connect = async (attempt: number): Promise<void> => {
      if (stopped) return;
      const token = accessToken();
      if (!token) return;
      try {
        const res = await fetch(STREAM_PATH, {
          headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
          signal: ctrl.signal,
        });
        if (res.status === 404) return setMode('poll'); // no stream on this service: polling it is
        if (res.status === 401) return saveSession(null);
        if (!res.ok || !res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream'))
          throw new Error(`stream answered ${res.status}`);
        setMode('stream');
        bump();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i: number;
          while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i).replace(/^\r?\n\r?\n/, '');
            const type = /^event:\s*(.*)$/m.exec(block)?.[1] ?? null;
            if (/^data:/m.test(block)) bump(type ?? 'message');
          }
        }
        throw new Error('stream ended');
      } catch {
        if (stopped) return;
        setMode('poll');
        window.setTimeout(() => void connect(attempt + 1), Math.min(30_000, 1000 * 2 ** attempt));
      }
    };
    void connect(0);
    return () => {
      stopped = true;
      ctrl.abort();
      window.clearInterval(timer);
      window.clearInterval(safety);
      if (pending !== null) window.clearTimeout(pending);
    };
  }, []);

  return <LiveContext.Provider value={state}>{children}</LiveContext.Provider>;
}

export const useLive = (): Live => useContext(LiveContext);
