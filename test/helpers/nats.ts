import { connect } from '@nats-io/transport-node';

export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** Like requirePostgres: in CI the NATS path must run, so an unreachable server fails there. */
export async function requireNats(): Promise<boolean> {
  try {
    const nc = await connect({ servers: NATS_URL, timeout: 1500, maxReconnectAttempts: 0 });
    await nc.close();
    return true;
  } catch {
    if (process.env.CI) throw new Error(`NATS is not reachable at ${NATS_URL}, and CI requires the NATS path`);
    console.warn(`NATS not reachable at ${NATS_URL}: NATS-path tests skipped (they run in CI)`);
    return false;
  }
}
