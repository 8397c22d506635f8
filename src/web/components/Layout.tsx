import type { ReactNode } from 'react';
import { api } from '../api/client';
import { useLive } from '../hooks/live';
import { Link, usePath } from '../lib/router';
import { saveSession, type Session } from '../lib/session';

const NAV = [
  { to: '/', label: 'Accounts', active: (p: string) => p === '/' || p.startsWith('/accounts') },
  { to: '/groups', label: 'Copier groups', active: (p: string) => p.startsWith('/groups') },
  { to: '/trades', label: 'Trades', active: (p: string) => p.startsWith('/trades') },
  { to: '/history', label: 'History', active: (p: string) => p.startsWith('/history') },
  { to: '/alerts', label: 'Alerts', active: (p: string) => p.startsWith('/alerts') },
  { to: '/connect', label: 'Connect', active: (p: string) => p.startsWith('/connect') },
  { to: '/developer', label: 'Developer', active: (p: string) => p.startsWith('/developer') },
  { to: '/security', label: 'Security', active: (p: string) => p.startsWith('/security') },
];

export function Layout({ session, children }: { session: Session; children: ReactNode }) {
  const path = usePath();
  const live = useLive();
  const signOut = async () => {
    try {
      await api.POST('/app/sign-out');
    } finally {
      saveSession(null);
    }
  };
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand" aria-label="copytrade home">
          copy<span>trade</span>
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.to}>
                <Link to={n.to} aria-current={n.active(path) ? 'page' : undefined}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span
            className={`live live-${live.mode}`}
            title={live.mode === 'stream' ? 'Live: event stream' : 'Live: polling every 2 s'}
          >
            {live.mode === 'stream' ? 'live' : live.mode === 'poll' ? 'polling' : '…'}
          </span>
          <span className="muted small" data-testid="who">
            {session.email}
          </span>
          <button type="button" className="btn btn-small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
