import { BridgeLink } from './link.js';
import { BridgeSession, type FrameSocket, SESSION_DEFAULTS, type SessionOptions } from './session.js';

/**
 * Every bridge account's link in this process: the endpoint attaches EA connections here, the adapter factory
 * takes the links from here. Links live as long as the process (their sequence numbers survive reconnects).
 */
export class BridgeHub {
  private readonly links = new Map<string, BridgeLink>();
  private readonly sessions = new Map<string, Set<BridgeSession>>();

  constructor(private readonly opts: SessionOptions = SESSION_DEFAULTS) {}

  /** How long an EA may go without a heartbeat before its account counts as disconnected. */
  get silentAfterMs(): number {
    return (this.opts.silentAfterSec ?? 3 * this.opts.heartbeatSec) * 1000;
  }

  link(accountId: string, login: string): BridgeLink {
    let l = this.links.get(accountId);
    if (!l || l.login !== login) {
      l = new BridgeLink(accountId, login);
      this.links.set(accountId, l);
    }
    return l;
  }

  peek(accountId: string): BridgeLink | undefined {
    return this.links.get(accountId);
  }

  /** A new EA connection for the account (token already checked); `tokenId` lets a revocation find it. */
  open(socket: FrameSocket, account: { id: string; login: string; tokenId: string }): BridgeSession {
    const s = new BridgeSession(socket, this.link(account.id, account.login), this.opts);
    let set = this.sessions.get(account.tokenId);
    if (!set) this.sessions.set(account.tokenId, (set = new Set()));
    set.add(s);
    const close = s.onClose.bind(s);
    s.onClose = () => {
      set.delete(s);
      close();
    };
    return s;
  }

  /** Ends the connections opened with a token (revoked). */
  revoke(tokenId: string): void {
    for (const s of this.sessions.get(tokenId) ?? []) s.revoke();
  }
}
