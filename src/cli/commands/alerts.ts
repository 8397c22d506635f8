import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { AppError } from '../../domain/errors.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { out, table } from '../output.js';

interface Channel {
  id: string;
  kind: string;
  name: string | null;
  email: string | null;
  chatId: string | null;
  botTokenMasked: string | null;
  enabled: boolean;
  failures: number;
  lastSentAt: string | null;
}
interface Delivery {
  ok: boolean;
  status: number | null;
  error: string | null;
  subject: string;
  trigger: string;
  attempt: number;
  eventCount: number;
  createdAt: string;
}

const where = (c: Channel) => (c.kind === 'email' ? c.email : `chat ${c.chatId} (token ${c.botTokenMasked})`);
const outcome = (d: Delivery) =>
  `${d.ok ? 'sent' : 'FAILED'}${d.status ? ` (${d.status})` : ''}${d.error ? `: ${d.error}` : ''}`;

/**
 * The bot token from a file or the environment, never from the command line (a process list and the shell's
 * history would show it).
 */
function botToken(o: { botTokenFile?: string }): string {
  if (o.botTokenFile) {
    try {
      return readFileSync(o.botTokenFile === '-' ? 0 : o.botTokenFile, 'utf8').trim();
    } catch (err) {
      throw new AppError('invalid_request', `cannot read --bot-token-file: ${(err as Error).message}`);
    }
  }
  const env = process.env.COPYTRADE_TELEGRAM_BOT_TOKEN;
  if (env) return env.trim();
  throw new AppError(
    'invalid_request',
    'the bot token: --bot-token-file <file> (or - for standard input), or $COPYTRADE_TELEGRAM_BOT_TOKEN',
  );
}

/** `copytrade alerts ...`: the built-in alerts' channels, tests, deliveries and rules (docs/alerts.md). */
export function alertCommands(program: Command): void {
  const alerts = program.command('alerts').description('built-in alerts by email or Telegram (docs/alerts.md)');

  withApiOptions(alerts.command('list').description('your alert channels')).action(async (o: ApiFlags) => {
    const ct = clientFor(o);
    const r = await ct.call(ct.api.GET('/v1/alert-channels'));
    out(o.json, r, () =>
      r.channels.length === 0
        ? 'no alert channels (add one: copytrade alerts add-email <address>)'
        : table(r.channels as Channel[], [
            ['channel', (c) => c.id],
            ['sends to', (c) => where(c) ?? ''],
            ['state', (c) => (!c.enabled ? 'off' : c.failures > 0 ? `failing (${c.failures})` : 'on')],
            ['last message', (c) => c.lastSentAt ?? '-'],
          ]),
    );
  });

  withApiOptions(alerts.command('add-email <address>').description("alert by email (the operator's SMTP server sends)"))
    .option('--name <name>', 'a name for the channel')
    .action(async (address: string, o: ApiFlags & { name?: string }) => {
      const ct = clientFor(o);
      const c = await ct.call(
        ct.api.POST('/v1/alert-channels', {
          body: { kind: 'email', email: address, ...(o.name ? { name: o.name } : {}) },
        }),
      );
      out(o.json, c, () => `${c.id}: alerts go to ${c.email}; try it: copytrade alerts test ${c.id}`);
    });

  withApiOptions(
    alerts
      .command('add-telegram')
      .description('alert in a Telegram chat through your bot (docs/alerts.md: creating the bot, finding the chat id)'),
  )
    .requiredOption('--chat-id <id>', 'the chat id (negative for a group) or a channel @username')
    .option(
      '--bot-token-file <file>',
      'a file holding the bot token, or - for standard input (else $COPYTRADE_TELEGRAM_BOT_TOKEN)',
    )
    .option('--name <name>', 'a name for the channel')
    .action(async (o: ApiFlags & { chatId: string; botTokenFile?: string; name?: string }) => {
      const body = {
        kind: 'telegram' as const,
        chatId: o.chatId,
        botToken: botToken(o),
        ...(o.name ? { name: o.name } : {}),
      };
      const ct = clientFor(o);
      const c = await ct.call(ct.api.POST('/v1/alert-channels', { body }));
      out(
        o.json,
        c,
        () =>
          `${c.id}: alerts go to chat ${c.chatId} (token ${c.botTokenMasked}); try it: copytrade alerts test ${c.id}`,
      );
    });

  withApiOptions(alerts.command('test <channelId>').description('send a test message now')).action(
    async (id: string, o: ApiFlags) => {
      const ct = clientFor(o);
      const d = await ct.call(
        ct.api.POST('/v1/alert-channels/{channel_id}/test', { params: { path: { channel_id: id } } }),
      );
      out(o.json, d, () => `test message: ${outcome(d as Delivery)}`);
      if (!d.ok) process.exitCode = 1;
    },
  );

  withApiOptions(alerts.command('deliveries <channelId>').description('messages sent and tried, newest first'))
    .option('--limit <n>', 'how many (1-200)', '20')
    .action(async (id: string, o: ApiFlags & { limit: string }) => {
      const ct = clientFor(o);
      const r = await ct.call(
        ct.api.GET('/v1/alert-channels/{channel_id}/deliveries', {
          params: { path: { channel_id: id }, query: { limit: o.limit } },
        }),
      );
      out(o.json, r, () =>
        table(r.deliveries as Delivery[], [
          ['when', (d) => d.createdAt],
          ['message', (d) => `${d.subject}${d.trigger === 'test' ? ' (test)' : ` (attempt ${d.attempt})`}`],
          ['outcome', (d) => outcome(d)],
        ]),
      );
    });

  withApiOptions(alerts.command('remove <channelId>').description('delete a channel and its delivery history')).action(
    async (id: string, o: ApiFlags) => {
      const ct = clientFor(o);
      await ct.call(ct.api.DELETE('/v1/alert-channels/{channel_id}', { params: { path: { channel_id: id } } }));
      out(o.json, { id, removed: true }, () => `${id} removed`);
    },
  );

  withApiOptions(alerts.command('rules').description('which kinds of event alert; --on/--off change them'))
    .option('--on <kinds...>', 'turn these kinds on')
    .option('--off <kinds...>', 'turn these kinds off')
    .action(async (o: ApiFlags & { on?: string[]; off?: string[] }) => {
      const ct = clientFor(o);
      const change = [
        ...(o.on ?? []).map((kind) => ({ kind, enabled: true })),
        ...(o.off ?? []).map((kind) => ({ kind, enabled: false })),
      ];
      const r = await ct.call(
        change.length > 0 ? ct.api.PUT('/v1/alert-rules', { body: { rules: change } }) : ct.api.GET('/v1/alert-rules'),
      );
      out(o.json, r, () =>
        table(r.rules, [
          ['kind', (x) => x.kind],
          ['alerts', (x) => (x.enabled ? 'on' : 'off')],
          ['what', (x) => x.description],
        ]),
      );
    });
}
