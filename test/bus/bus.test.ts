import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Bus } from '../../src/bus/bus.js';
import { subjectMatches } from '../../src/bus/bus.js';
import { LocalBus } from '../../src/bus/local-bus.js';
import { NatsBus, NoResponder } from '../../src/bus/nats-bus.js';
import { Store } from '../../src/store/store.js';
import { NATS_URL, requireNats } from '../helpers/nats.js';
import { requirePostgres, tempDatabase } from '../helpers/postgres.js';

const natsUp = await requireNats();
const pgUp = await requirePostgres();

const nextMessage = (bus: Bus, subject: string) =>
  new Promise<{ data: string; subject: string }>((resolve) => {
    const off = bus.subscribe(subject, (data, s) => {
      off();
      resolve({ data, subject: s });
    });
  });

function busContract(name: string, make: () => Promise<{ a: Bus; b: Bus }>) {
  describe(`bus contract: ${name}`, () => {
    it('delivers to wildcard subscribers, including across the two ends, and not after unsubscribe', async () => {
      const { a, b } = await make();
      try {
        // A subscription is in place once b's round trip to the server is back (in-process: at once).
        const got = nextMessage(b, 'events.appended.*');
        await b.ping?.();
        a.publish('events.appended.usr_1', 'usr_1');
        expect(await got).toEqual({ data: 'usr_1', subject: 'events.appended.usr_1' });
        const seen: string[] = [];
        const off = b.subscribe('x.>', (d) => seen.push(d));
        // A witness on 'other' gets each end's last message: b has handled everything a published before it.
        let witness = nextMessage(b, 'other');
        await b.ping?.();
        a.publish('x.y.z', '1');
        a.publish('other', '2');
        expect((await witness).data).toBe('2');
        off();
        witness = nextMessage(b, 'other');
        await b.ping?.();
        a.publish('x.y', '3');
        a.publish('other', '4');
        expect((await witness).data).toBe('4');
        expect(seen).toEqual(['1']);
      } finally {
        await a.close();
        if (b !== a) await b.close();
      }
    });
  });
}

describe('subject matching', () => {
  it('follows NATS wildcards', () => {
    expect(subjectMatches('a.*', 'a.b')).toBe(true);
    expect(subjectMatches('a.*', 'a.b.c')).toBe(false);
    expect(subjectMatches('a.>', 'a.b.c')).toBe(true);
    expect(subjectMatches('a.>', 'a')).toBe(false);
  });
});

busContract('in-process', async () => {
  const bus = new LocalBus();
  return { a: bus, b: bus };
});

describe.runIf(natsUp)('NATS server', () => {
  const prefix = `ct_${randomBytes(4).toString('hex')}`;
  busContract('NATS', async () => ({
    a: await NatsBus.connect(NATS_URL, { prefix }),
    b: await NatsBus.connect(NATS_URL, { prefix }),
  }));

  it('a served subject drained: the requests already delivered are answered, a later one finds no responder', async () => {
    const p = `ct_${randomBytes(4).toString('hex')}`;
    const [server, client] = [
      await NatsBus.connect(NATS_URL, { prefix: p }),
      await NatsBus.connect(NATS_URL, { prefix: p }),
    ];
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const seen: string[] = [];
      const served = server.serve('orders.m1', async (data) => {
        seen.push(data);
        if (data === 'first') await held;
        return `ok ${data}`;
      });
      await server.ping();
      // Two requests in: the first is being answered (held), the second waits behind it in this process.
      const first = client.request('orders.m1', 'first', 10_000);
      const second = client.request('orders.m1', 'second', 10_000);
      for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const drained = served.drain();
      release();
      await drained;
      expect(await first).toBe('ok first');
      expect(await second).toBe('ok second');
      // Drained: nobody serves the subject any more (the api answers 503, nothing sent).
      await expect(client.request('orders.m1', 'third', 2_000)).rejects.toBeInstanceOf(NoResponder);
    } finally {
      await server.close();
      await client.close();
    }
  });

  it.runIf(pgUp)(
    'an event appended by one process wakes the readers of another (two stores on one PostgreSQL, signalled over NATS)',
    async () => {
      const db = await tempDatabase();
      const p = `ct_${randomBytes(4).toString('hex')}`;
      const s1 = await Store.open({ dataDir: ':unused:', databaseUrl: db.url });
      const s2 = await Store.open({ dataDir: ':unused:', databaseUrl: db.url, migrate: false });
      const [b1, b2] = [await NatsBus.connect(NATS_URL, { prefix: p }), await NatsBus.connect(NATS_URL, { prefix: p })];
      s1.events.useBus(b1);
      s2.events.useBus(b2);
      try {
        const u = await s1.users.create('bus@example.test', 'h');
        await b2.ping(); // s2's subscription (useBus) is at the server
        const woken = new Promise<string>((resolve) => s2.events.onAppended(resolve));
        await s1.events.emit([{ userId: u.id, accountId: null, type: 'webhook.test', payload: {} }]);
        expect(await woken).toBe(u.id);
        const [ev] = await s2.events.after(u.id, 0, 10);
        expect(ev?.type).toBe('webhook.test');
      } finally {
        await b1.close();
        await b2.close();
        await s1.close();
        await s2.close();
        await db.drop();
      }
    },
  );
});
