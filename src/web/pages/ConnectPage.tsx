import { platformName } from '../lib/format';
import { Link } from '../lib/router';

const PLATFORMS = [
  {
    to: '/connect/platforma',
    title: platformName('platforma'),
    sub: 'through MetaApi: broker server, login ID, trading password',
    steps:
      'Search the broker server, enter the login ID and trading password, confirm, then assign the account to a copier group.',
  },
  {
    to: '/connect/metatrader-bridge',
    title: 'MetaTrader, self-hosted',
    sub: 'an Expert Advisor in your own MT4 or MT5 terminal, no cloud',
    steps:
      'Enter the server and login, copy the token shown once, install the EA with the URL to allow-list; it turns green when the EA says hello.',
  },
  {
    to: '/connect/platformb',
    title: platformName('platformb'),
    sub: 'email + password, Demo or Live',
    steps: 'Choose Demo or Live, enter the server, email and password; pick the account and verify its number.',
  },
  {
    to: '/connect/platformd',
    title: platformName('platformd'),
    sub: "the broker's DXtrade server, username + password, Demo or Live",
    steps:
      "Choose Demo or Live, enter the broker's DXtrade server, your username, domain and password; pick the account.",
  },
  {
    to: '/connect/platformc',
    title: platformName('platformc'),
    sub: 'cTrader ID in an authorization window',
    steps:
      'Approve access in the authorization window (allow the popup), pick the account, verify account and environment, connect it to a group.',
  },
];

/** Step one of every connection: choose the platform. */
export function ConnectPage() {
  return (
    <section aria-labelledby="connect-title">
      <h1 id="connect-title">Connect an account</h1>
      <p className="muted">At most 3 connection requests per 5 minutes per user.</p>
      <ul className="platforms">
        {PLATFORMS.map((p) => (
          <li key={p.to} className="card">
            <h2>
              <Link to={p.to}>{p.title}</Link>
            </h2>
            <p className="muted">{p.sub}</p>
            <p className="small">{p.steps}</p>
            <Link to={p.to} className="btn btn-primary" aria-label={`Connect a ${p.title} account`}>
              Connect
            </Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
