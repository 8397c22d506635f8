import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dec } from '../../src/domain/decimal.js';
import type { BrokerEvent, OrderOutcome } from '../../src/platforms/adapter.js';
import { bridgeWorld } from '../helpers/bridge-world.js';

type World = Awaited<ReturnType<typeof bridgeWorld>>;

/**
 * 250 in `npm test` (about 12 s); the acceptance run is 1,000 (`BRIDGE_FAULT_COMMANDS=1000`, about 45 s;
 * its figures are in docs/platforms/platform-a-bridge.md).
 */
const COMMANDS = Number(process.env.BRIDGE_FAULT_COMMANDS ?? 250);

/**
 * The bridge under every fault at once: the simulated EA's connection drops, duplicates, reorders and delays
 * events and cuts itself in the middle of commands; the broker times out, rejects and fills in part. A driver
 * does what the engine does with an unknown outcome (look the tag up, send again only when it is absent) and
 * the result is counted from the simulated EA's books: every open exactly once, every close once, and every
 * position reported to subscribe() opened once and closed once.
 */
/** MT5's WebSocket, and MT4's long polls (held 200 ms; a cut between polls is known stale after 50 ms). */
const TRANSPORTS = {
  'MT5 WebSocket': {},
  'MT4 long polls': {
    transport: 'poll' as const,
    pollWaitSec: 0.2,
    endpoint: { pollsPerMinute: 1_000_000, poll: { staleMs: 50 } },
  },
};

describe.each(Object.entries(TRANSPORTS))(
  `terminal bridge over %s: ${COMMANDS} commands with every fault on`,
  (_name, transport) => {
    let w: World;
    const events: BrokerEvent[] = [];
    let off = () => {};

    beforeAll(async () => {
      w = await bridgeWorld({
        ...transport,
        timeoutMs: 150,
        // Every cut is a reconnect: far more than the endpoint's default 30 a minute from one address.
        upgradesPerMinute: 100_000,
        ea: {
          reconnectMs: 5,
          faults: {
            seed: 47,
            drop: 0.03,
            duplicate: 0.03,
            reorder: 0.03,
            delay: 0.05,
            delayMaxMs: 10,
            disconnectBeforeCommand: 0.02,
            disconnectAfterCommand: 0.02,
          },
        },
      });
      w.broker.setPrice('EURUSD', '1.08000');
      off = w.adapter.subscribe!((e) => events.push(e));
    }, 30_000);
    afterAll(async () => {
      off();
      await w?.teardown();
    });

    /** What the engine does with an outcome it cannot know: settle by the tag, resend only when it is absent. */
    async function open(tag: string): Promise<'done' | 'refused'> {
      for (let attempt = 0; attempt < 20; attempt++) {
        const out: OrderOutcome = await w.adapter.placeOrder({
          symbol: 'EURUSD',
          side: 'buy',
          type: 'market',
          volume: dec('0.01'),
          tag,
        });
        if (out.kind === 'confirmed') return 'done';
        if (out.kind === 'rejected' && !out.retry) return 'refused';
        if (out.kind === 'unresolved') {
          const found = await w.adapter.findByTag(tag).catch(() => null);
          if (found?.found) return found.order?.status === 'cancelled' ? 'refused' : 'done';
        }
      }
      throw new Error(`open ${tag} never settled`);
    }

    async function close(positionId: string): Promise<void> {
      for (let attempt = 0; attempt < 20; attempt++) {
        const out = await w.adapter.closePosition(positionId);
        if (out.kind === 'confirmed') return;
        const still = (await w.adapter.listPositions().catch(() => null))?.some((p) => p.id === positionId);
        if (still === false) return;
      }
      throw new Error(`close ${positionId} never settled`);
    }

    it('0 duplicates and 0 losses, in the books and in the events', async () => {
      const acc = w.acc.id;
      const opened: string[] = [];
      const refused: string[] = [];
      let sent = 0;
      const faultKinds = ['timeout_after_apply', 'timeout_before_apply', 'reject', 'partial_fill', 'delay'] as const;
      for (let i = 0; sent < COMMANDS; i++) {
        // Every 25th command meets a broker fault too, in turn.
        if (i % 25 === 0) {
          const kind = faultKinds[(i / 25) % faultKinds.length]!;
          w.broker.faults.inject({ op: 'placeOrder', kind, accountId: acc, delayMs: 200, partialRatio: 0.5 });
        }
        const open_ = w.broker.positions(acc);
        if (open_.length > 5 && i % 3 === 0) {
          await close(open_[0]!.id);
        } else {
          const tag = `ft${i.toString(36)}`;
          ((await open(tag)) === 'done' ? opened : refused).push(tag);
        }
        sent++;
      }
      for (const p of w.broker.positions(acc)) await close(p.id);
      w.broker.faults.clear();

      // Counted from the EA's books: each confirmed open is one order and one position with its tag; a refused
      // one left no position; nothing is open at the end.
      const history = w.broker.orders(acc, { includeHistory: true });
      for (const tag of opened) {
        const orders = history.filter((o) => o.tag === tag && o.status === 'filled');
        expect(orders, `open ${tag}`).toHaveLength(1);
      }
      for (const tag of refused) expect(history.filter((o) => o.tag === tag && o.status === 'filled')).toHaveLength(0);
      expect(w.broker.positions(acc)).toEqual([]);
      const deals = w.broker.deals(acc);
      const positions = new Set(deals.map((d) => d.positionId));
      expect(positions.size).toBe(opened.length);

      // Every position the books hold was reported opened once and closed once, whatever the connection did.
      await expect
        .poll(() => events.filter((e) => e.kind === 'position_closed').length, { timeout: 20_000 })
        .toBe(positions.size);
      for (const id of positions) {
        expect(
          events.filter((e) => e.kind === 'position_opened' && e.position?.id === id),
          `opened ${id}`,
        ).toHaveLength(1);
        expect(
          events.filter((e) => e.kind === 'position_closed' && e.position?.id === id),
          `closed ${id}`,
        ).toHaveLength(1);
      }
      // The faults did happen: the EA reconnected, and remembered commands were answered, not executed again.
      expect(w.ea.connects).toBeGreaterThan(10);
      console.log(
        `bridge fault run: ${sent} commands, ${opened.length} opens, ${refused.length} refused, ${w.ea.connects} connects, ${w.ea.repeatedCommands} repeated command ids answered from memory, ${w.ea.errors.length} protocol errors seen by the EA`,
      );
    }, 240_000);
  },
);
