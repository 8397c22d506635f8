import { sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { rowsOf } from '../rows-of.js';
import { dec, decOrNull } from '../../domain/decimal.js';
import type { ReplayIntent, ReplayTrade } from '../../domain/revisions/replay-types.js';
import type { OrderType, Side } from '../../domain/types.js';
import { intentAction } from '../../domain/intent-action.js';
import { intentState } from '../../domain/intent.js';

/** What a what-if replay reads of a period (docs/what-if.md); it reads only, never writes. */
export interface ReplayHistory {
  rows: Array<{ intent: ReplayIntent; trade: ReplayTrade }>;
  /** The trades of the rows' Masters in the period (and the rows' own): where their positions went. */
  masterTrades: ReplayTrade[];
}

type IntentTuple = [
  string,
  string,
  string,
  string | null,
  Side,
  string,
  string | null,
  string | null,
  unknown,
  number,
  string,
];
type TradeTuple = [
  string,
  string,
  string,
  string,
  Side,
  OrderType,
  string,
  string | null,
  string | null,
  string | null,
  string | null,
  string | null,
  number | null,
  number,
  number | null,
  string | null,
];

/**
 * Each of the two reads is one JSON text (rows as arrays, numerics as their text): against rows of columns through
 * the embedded store's protocol, a 1,000-row period read in a fifth of the time.
 */
export class ReplayHistoryRepo {
  constructor(private readonly db: Db) {}

  /** A Slave's ledger rows planned since `since`, each with its Master's trade, in the order they were planned. */
  async read(slaveAccountId: string, since: Date): Promise<ReplayHistory> {
    const [r] = rowsOf<{ rows: string; trades: string }>(
      await this.db.execute(sql`
        with ci as (
          select id, action, state, skip_reason, side, symbol, planned_volume, fill_price, sizing_inputs, created_at,
                 trade_id
          from copy_intents where slave_account_id = ${slaveAccountId} and created_at >= ${since.toISOString()}
        ), masters as (
          select distinct t.master_account_id as id from trades t where t.id in (select trade_id from ci)
        )
        select
          (select coalesce(json_agg(json_build_array(id, action, state, skip_reason, side, symbol, planned_volume::text,
                  fill_price::text, sizing_inputs, (extract(epoch from created_at) * 1000)::float8, trade_id)
                  order by created_at, id), '[]')::text from ci) as rows,
          (select coalesce(json_agg(json_build_array(t.id, t.master_account_id, t.action, t.symbol, t.side,
                  t.order_type, t.volume::text, t.price::text, t.stop_loss::text, t.take_profit::text,
                  t.fill_price::text, t.master_position_id, (extract(epoch from t.action_at) * 1000)::float8,
                  (extract(epoch from t.created_at) * 1000)::float8, t.master_magic, t.master_comment)), '[]')::text
           from trades t
           where t.id in (select trade_id from ci)
              or (t.master_account_id in (select id from masters) and t.created_at >= ${since.toISOString()})) as trades`),
    );
    const trades = new Map<string, ReplayTrade>();
    for (const t of JSON.parse(r?.trades ?? '[]') as TradeTuple[]) trades.set(t[0], tradeOf(t));
    const rows: ReplayHistory['rows'] = [];
    for (const i of JSON.parse(r?.rows ?? '[]') as IntentTuple[]) {
      const trade = trades.get(i[10]);
      if (trade) rows.push({ intent: intentOf(i), trade });
    }
    return { rows, masterTrades: [...trades.values()] };
  }
}

const intentOf = (i: IntentTuple): ReplayIntent => ({
  id: i[0],
  action: intentAction(i[1]),
  state: intentState(i[2]),
  skipReason: i[3],
  side: i[4],
  symbol: i[5],
  plannedVolume: decOrNull(i[6]),
  fillPrice: decOrNull(i[7]),
  sizingInputs: i[8],
  createdAt: new Date(i[9]),
});

const tradeOf = (t: TradeTuple): ReplayTrade => ({
  id: t[0],
  masterAccountId: t[1],
  action: t[2],
  symbol: t[3],
  side: t[4],
  orderType: t[5],
  volume: dec(t[6]),
  price: decOrNull(t[7]),
  stopLoss: decOrNull(t[8]),
  takeProfit: decOrNull(t[9]),
  fillPrice: decOrNull(t[10]),
  masterPositionId: t[11],
  actionAt: t[12] === null ? null : new Date(t[12]),
  createdAt: new Date(t[13]),
  masterMagic: t[14],
  masterComment: t[15],
});
