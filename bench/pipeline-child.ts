// The whole service (`startService`: store, watcher, engine, settle loop, reconciler, health, API) in a child
// process, beside brokers simulated by the parent: the parent's CPU is then the simulator's and this process's is
// ours. It watches its own event loop and answers the parent's questions over IPC.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../src/config/config.js';
import { createLogger } from '../src/config/logger.js';
import type { DemoBrokers } from '../src/demo/demo-brokers.js';
import { startService } from '../src/main.js';

export interface ChildEndpoints {
  platformb: string;
  platformc: { host: string; port: number; ca: string; oauthBaseUrl: string; clientId: string; clientSecret: string };
}

export interface ChildSample {
  rssMb: number;
  /** Event-loop delay since the last sample (ms). */
  loopP50Ms: number;
  loopP99Ms: number;
  loopMaxMs: number;
  /** CPU time of this process since the last sample (ms), and the event loop's busy share. */
  cpuMs: number;
  elu: number;
  /** Rows in the tables that grow with every copy (the soak watches them against latency). */
  rows: Record<'copyIntents' | 'trades' | 'events' | 'positionLinks' | 'masterItems' | 'requestRecords', number>;
}

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const [dataDir, port, endpointsJson] = process.argv.slice(2);
const ep = JSON.parse(endpointsJson!) as ChildEndpoints;
const unused = () => Promise.reject(new Error('the benchmark seeds its own accounts'));
const brokers: DemoBrokers = {
  endpoints: {
    platformb: { baseUrl: () => ep.platformb },
    platformd: {
      baseUrl: () => {
        throw new Error('the benchmark runs no DXtrade account');
      },
    },
    platformc: {
      endpoint: () => ({ host: ep.platformc.host, port: ep.platformc.port, ca: ep.platformc.ca }),
      oauthBaseUrl: ep.platformc.oauthBaseUrl,
      clientId: ep.platformc.clientId,
      clientSecret: ep.platformc.clientSecret,
    },
    platforma: { baseUrl: 'http://127.0.0.1:9', token: '' },
  },
  hostsSimPlatform: false,
  stateId: null,
  createAccount: unused,
  accounts: async () => [],
  issueCTraderToken: unused,
  startEa: unused,
  stopEas: async () => {},
};
const cfg = loadConfig({ dataDir: dataDir!, port: port! });
// Warnings and errors reach the bench's output (LOG_LEVEL, warn by default): a run that stops copying says why.
const svc = await startService(cfg, createLogger(cfg.logLevel, process.stderr), { simulator: brokers });

let cpu = process.cpuUsage();
let elu = performance.eventLoopUtilization();
/** Counted on the service's own store (the embedded one is this process's alone). */
async function rowCounts(): Promise<ChildSample['rows']> {
  const res = await svc.store.database.db.execute(sql`select
    (select count(*) from copy_intents)::int as "copyIntents",
    (select count(*) from trades)::int as "trades",
    (select count(*) from events)::int as "events",
    (select count(*) from position_links)::int as "positionLinks",
    (select count(*) from master_items)::int as "masterItems",
    (select count(*) from request_records)::int as "requestRecords"`);
  const rows = Array.isArray(res) ? res : (res as unknown as { rows: unknown[] }).rows;
  return rows[0] as ChildSample['rows'];
}

/** Each open copy's hops (ms) as the engine recorded them on its intent: plan, record, send (queue), ack. */
async function openLatencies(): Promise<Array<Record<string, number>>> {
  const res = await svc.store.database.db.execute(
    sql`select i.latency from copy_intents i join trades t on t.id = i.trade_id where t.action = 'open' and i.latency is not null order by t.created_at, i.id`,
  );
  const rows = (Array.isArray(res) ? res : (res as unknown as { rows: unknown[] }).rows) as Array<{ latency: unknown }>;
  return rows.map((r) => (typeof r.latency === 'string' ? JSON.parse(r.latency) : r.latency) as Record<string, number>);
}

// The parent gone (killed, or crashed past its cleanup): the service goes too, not left running for an hour.
process.on('disconnect', () => process.exit(0));

process.on('message', async (m: unknown) => {
  if (m === 'sample') {
    // Counted first, so the CPU and loop figures below include the count's own cost in this minute, not the next.
    const rows = await rowCounts();
    const c = process.cpuUsage(cpu);
    const e = performance.eventLoopUtilization(elu);
    const s: ChildSample = {
      rssMb: process.memoryUsage().rss / 2 ** 20,
      loopP50Ms: loop.percentile(50) / 1e6,
      loopP99Ms: loop.percentile(99) / 1e6,
      loopMaxMs: loop.max / 1e6,
      cpuMs: (c.user + c.system) / 1000,
      elu: e.utilization,
      rows,
    };
    cpu = process.cpuUsage();
    elu = performance.eventLoopUtilization();
    loop.reset();
    process.send!({ sample: s });
  }
  if (m === 'latencies') process.send!({ latencies: await openLatencies() });
  if (m === 'stop') void svc.close().then(() => process.exit(0));
});
process.send!('started');
