import { Option, type Command } from 'commander';
import type { OrderRequest } from '../../client/index.js';
import { AppError } from '../../domain/errors.js';
import { clientFor, withApiOptions, type ApiFlags } from '../api-context.js';
import { fields, out } from '../output.js';

/** A decimal flag as the JSON number the order route takes; refused here with the flag's name, not by the server. */
export function num(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n))
    throw new AppError('invalid_request', `${name} must be a number, got ${JSON.stringify(v)}`);
  return n;
}

export function orderCommands(program: Command): void {
  const orders = program.command('orders').description('orders on a Master account (copied to its Slaves)');
  withApiOptions(
    orders
      .command('send <accountId>')
      .description('send an order to a Master; its copy rules distribute it to the eligible Slaves'),
  )
    .requiredOption('--symbol <symbol>', 'instrument, e.g. EURUSD')
    .addOption(new Option('--side <side>', 'direction').choices(['buy', 'sell']).makeOptionMandatory())
    .requiredOption('--volume <lots>', "volume in lots of the Master's broker")
    .option('--sl <price>', 'stop loss')
    .option('--tp <price>', 'take profit')
    .addOption(new Option('--type <type>', 'order type').choices(['market', 'limit', 'stop']))
    .option('--price <price>', 'price of a limit or stop order')
    .option('--idempotency-key <key>', 'send again safely: the same key answers the first outcome')
    .action(
      async (
        accountId: string,
        o: ApiFlags & {
          symbol: string;
          side: 'buy' | 'sell';
          volume: string;
          sl?: string;
          tp?: string;
          type?: 'market' | 'limit' | 'stop';
          price?: string;
          idempotencyKey?: string;
        },
      ) => {
        const body: OrderRequest = { symbol: o.symbol, side: o.side, volume: num('--volume', o.volume)! };
        if (o.sl !== undefined) body.stopLoss = num('--sl', o.sl)!;
        if (o.tp !== undefined) body.takeProfit = num('--tp', o.tp)!;
        if (o.type) body.type = o.type;
        if (o.price !== undefined) body.price = num('--price', o.price)!;
        const ct = clientFor(o);
        const r = await ct.call(
          ct.api.POST('/v1/accounts/{account_id}/orders', {
            params: { path: { account_id: accountId } },
            body,
            ...(o.idempotencyKey ? { headers: { 'Idempotency-Key': o.idempotencyKey } } : {}),
          }),
        );
        out(
          o.json,
          r,
          () =>
            `${fields([
              ['trade', r.tradeId],
              ['status', r.status],
              ['copied to', `${r.copiedTo} Slave(s)`],
              ['fill price', r.fillPrice],
              ['position', r.masterPositionId],
            ])}\n(accepted is not filled: copytrade trades show ${r.tradeId})`,
        );
      },
    );
}
