import type { AlertChannelService } from '../alerts/channel-service.js';
import type { Store } from '../store/store.js';
import { DEMO_EMAIL } from './seed.js';

/**
 * Demo mode, when its alerts go to the in-memory inbox (no SMTP server set): the demo user gets one email channel
 * on the first start, so a panic-close or a refused copy in the demo shows an alert on the Alerts page at once.
 */
export async function seedDemoAlertChannel(store: Store, alerts: AlertChannelService): Promise<void> {
  const user = await store.users.byEmail(DEMO_EMAIL);
  if (!user || (await store.alerts.count(user.id)) > 0) return;
  await alerts.create(user.id, { kind: 'email', email: DEMO_EMAIL, name: 'Demo inbox (demo only: kept in memory)' });
}
