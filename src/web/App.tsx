import { useEffect, useState } from 'react';
import { Layout } from './components/Layout';
import { LiveProvider } from './hooks/live';
import { match, navigate, usePath } from './lib/router';
import { loadSession, onSessionChange, type Session } from './lib/session';
import { AccountDetailPage } from './pages/AccountDetailPage';
import { AccountsPage } from './pages/AccountsPage';
import { AlertsPage } from './pages/AlertsPage';
import { ConnectAWizard } from './pages/ConnectAWizard';
import { ConnectBridgeWizard } from './pages/ConnectBridgeWizard';
import { ConnectBWizard } from './pages/ConnectBWizard';
import { ConnectDWizard } from './pages/ConnectDWizard';
import { ConnectCWizard } from './pages/ConnectCWizard';
import { ConnectPage } from './pages/ConnectPage';
import { DeveloperPage } from './pages/DeveloperPage';
import { GroupsPage } from './pages/GroupsPage';
import { HistoryPage } from './pages/HistoryPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { ServiceLevelsPage } from './pages/ServiceLevelsPage';
import { SecurityPage } from './pages/SecurityPage';
import { SignInPage } from './pages/SignInPage';
import { VerifyEmailPage } from './pages/SignUpPage';
import { TradesPage } from './pages/TradesPage';

function Routes({ path }: { path: string }) {
  let m: Record<string, string> | null;
  if (path === '/' || path.startsWith('/?') || path === '/accounts') return <AccountsPage />;
  if ((m = match('/accounts/:id', path))) return <AccountDetailPage id={m.id!} />;
  if (match('/groups', path)) return <GroupsPage />;
  if ((m = match('/groups/:id/service-levels', path))) return <ServiceLevelsPage groupId={m.id!} />;
  if (match('/trades', path)) return <TradesPage />;
  if (match('/history', path)) return <HistoryPage />;
  if (match('/alerts', path)) return <AlertsPage />;
  if (match('/connect', path)) return <ConnectPage />;
  if (match('/connect/platforma', path)) return <ConnectAWizard />;
  if (match('/connect/platformb', path)) return <ConnectBWizard />;
  if (match('/connect/platformd', path)) return <ConnectDWizard />;
  if (match('/connect/platformc', path)) return <ConnectCWizard />;
  if (match('/connect/metatrader-bridge', path)) return <ConnectBridgeWizard />;
  if (match('/developer', path)) return <DeveloperPage />;
  if (match('/security', path)) return <SecurityPage />;
  return <NotFoundPage />;
}

export function App() {
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const path = usePath();
  useEffect(() => onSessionChange(setSession), []);
  useEffect(() => {
    if (session && path.startsWith('/sign-in')) navigate('/', { replace: true });
  }, [session, path]);
  useEffect(() => {
    const title = path.split('?')[0]!.split('/')[1] || 'accounts';
    document.title = `${title.charAt(0).toUpperCase()}${title.slice(1).replace('-', ' ')} · copytrade`;
  }, [path]);

  if (!session) return path.startsWith('/verify-email') ? <VerifyEmailPage /> : <SignInPage />;
  return (
    <LiveProvider key={session.accessToken}>
      <Layout session={session}>
        <Routes path={path} />
      </Layout>
    </LiveProvider>
  );
}
