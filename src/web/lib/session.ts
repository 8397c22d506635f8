/** The signed-in session, kept in sessionStorage: it ends with the tab, and never reaches localStorage. */
export interface Session {
  accessToken: string;
  expiresAt: string;
  userId: string;
  email: string;
}

const KEY = 'copytrade.session';
type Listener = (s: Session | null) => void;
const listeners = new Set<Listener>();

export function loadSession(now = Date.now()): Session | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    if (!s.accessToken || (s.expiresAt && Date.parse(s.expiresAt) <= now)) {
      sessionStorage.removeItem(KEY);
      return null;
    }
    return s;
  } catch {
    return null;
  }
}

export function saveSession(s: Session | null): void {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
  for (const l of listeners) l(s);
}

export function onSessionChange(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export const accessToken = (): string | null => loadSession()?.accessToken ?? null;
