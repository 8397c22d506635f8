/**
 * What `lazySerializers` and `lazyValidators` compile on a route's first use, compiled ahead of it for the routes a
 * caller chooses: the trading routes' first request after a start paid ~95 ms of compiling (a first order 168 ms
 * against 71-76 for the next ones in the demo), at the moment a user acts on a market. One compile per turn of the
 * event loop (20-30 ms each), after the server listens, so no request waits behind all of them at once.
 */
export class RouteWarmup {
  private readonly thunks: Array<{ method: string; url: string; compile: () => unknown }> = [];

  add(method: string | string[], url: string, compile: () => unknown): void {
    for (const m of Array.isArray(method) ? method : [method]) this.thunks.push({ method: m, url, compile });
  }

  /** Compiles what matches, one per turn; returns how many compiled. A schema that does not compile is left to its route's first request (a 500 there, as before). */
  async warm(match: (method: string, url: string) => boolean): Promise<number> {
    let n = 0;
    for (const t of this.thunks) {
      if (!match(t.method, t.url)) continue;
      await new Promise((r) => setImmediate(r));
      try {
        t.compile();
        n++;
      } catch {
        // Reported by the route's own first request.
      }
    }
    return n;
  }
}

/** The routes a user trades through: orders, position closes and panic-closes. */
export const tradingRoute = (method: string, url: string): boolean =>
  method === 'POST' && /\/(accounts\/:account_id\/orders|positions\/:position_id\/close|panic-close)$/.test(url);

/** Each server's warm-up, as `buildServer` made it. */
export const routeWarmups = new WeakMap<object, RouteWarmup>();
