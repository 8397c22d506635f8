import { BusDisconnected, NoResponder, ReplyTimeout, type NatsBus } from '../bus/nats-bus.js';
import { Decimal } from '../domain/decimal.js';
import { AppError, type ErrorCode } from '../domain/errors.js';
import type { OrderInput, OrderResult, OrderService } from '../engine/order-service.js';
import { StaleLeaseError } from '../domain/lease.js';
import { isStoreUnavailable, storeUnavailable } from '../store/unavailable.js';
import type { Logger } from 'pino';

/** One subject per Master: its worker serves it while it holds the Master's lease, one request at a time. */
export const orderSubject = (masterAccountId: string) => `orders.${masterAccountId}`;

interface WireRequest {
  userId: string;
  masterAccountId: string;
  requestId: string | null;
  input: { [K in keyof OrderInput]: string | null };
}

type WireReply =
  | {
      ok: true;
      result: Omit<OrderResult, 'copies' | 'fillPrice'> & { fillPrice: string | null };
    }
  | {
      ok: false;
      error: { code: ErrorCode; message: string; retryable?: boolean; retryAfter?: number; details?: object };
    };

const dec = (v: string | null) => (v === null ? null : new Decimal(v));

/**
 * The order route of an `api` process: the request goes to the worker holding the Master's lease and the answer
 * is that worker's `OrderService.send` (202 only once it made the intents durable). No worker holds the lease
 * now (a failover in progress): 503, nothing was sent. No answer in time: 409 write_outcome_unknown, as when the
 * Master's broker does not answer (the worker may have placed it; its settle loop finishes the trade).
 */
export class RemoteOrders implements Pick<OrderService, 'send'> {
  constructor(
    private readonly bus: NatsBus,
    private readonly timeoutMs: number,
  ) {}

  async send(userId: string, masterAccountId: string, input: OrderInput, requestId: string | null) {
    const req: WireRequest = {
      userId,
      masterAccountId,
      requestId,
      input: {
        symbol: input.symbol,
        side: input.side,
        type: input.type,
        volume: input.volume.toString(),
        price: input.price?.toString() ?? null,
        stopLoss: input.stopLoss?.toString() ?? null,
        takeProfit: input.takeProfit?.toString() ?? null,
      },
    };
    let raw: string;
    try {
      raw = await this.bus.request(orderSubject(masterAccountId), JSON.stringify(req), this.timeoutMs);
    } catch (err) {
      if (err instanceof NoResponder)
        throw new AppError(
          'upstream_unavailable',
          'no worker holds this Master account right now (a takeover is in progress); nothing was sent, retry shortly',
          { retryable: true, retryAfter: 2 },
        );
      if (err instanceof BusDisconnected)
        throw new AppError(
          'upstream_unavailable',
          'this api process is not connected to its workers right now (NATS is reconnecting); nothing was sent, retry shortly',
          { retryable: true, retryAfter: 2 },
        );
      if (err instanceof ReplyTimeout)
        throw new AppError(
          'write_outcome_unknown',
          `the worker owning the Master did not answer within ${this.timeoutMs} ms; list the account's trades before retrying`,
        );
      throw err;
    }
    const reply = JSON.parse(raw) as WireReply;
    if (!reply.ok) {
      const e = reply.error;
      throw new AppError(e.code, e.message, {
        ...(e.retryable !== undefined ? { retryable: e.retryable } : {}),
        ...(e.retryAfter !== undefined ? { retryAfter: e.retryAfter } : {}),
        ...(e.details !== undefined ? { details: e.details as Record<string, unknown> } : {}),
      });
    }
    const r = reply.result;
    const result: OrderResult = { ...r, fillPrice: dec(r.fillPrice), copies: Promise.resolve() };
    return result;
  }
}

/**
 * The worker's side: answers a Master's order requests while it holds the Master's lease (`holds`, checked per
 * request: a lease lost a moment ago answers 503 and the api retries nothing on its own).
 */
export function serveOrders(
  bus: NatsBus,
  orders: OrderService,
  holds: (masterAccountId: string) => boolean,
  logger: Logger | false = false,
): {
  attach(masterAccountId: string): void;
  detach(masterAccountId: string): void;
  /** Stops taking this Master's requests; resolves once those already delivered here are answered. */
  drain(masterAccountId: string): Promise<void>;
  detachAll(): void;
} {
  const served = new Map<string, { stop(): void; drain(): Promise<void> }>();
  const answer = async (data: string): Promise<string> => {
    const req = JSON.parse(data) as WireRequest;
    let reply: WireReply;
    try {
      if (!holds(req.masterAccountId))
        throw new AppError('upstream_unavailable', 'this worker no longer holds the Master account; retry shortly', {
          retryable: true,
          retryAfter: 2,
        });
      const i = req.input;
      const res = await orders.send(
        req.userId,
        req.masterAccountId,
        {
          symbol: i.symbol!,
          side: i.side as OrderInput['side'],
          type: i.type as OrderInput['type'],
          volume: new Decimal(i.volume!),
          price: dec(i.price),
          stopLoss: dec(i.stopLoss),
          takeProfit: dec(i.takeProfit),
        },
        req.requestId,
      );
      res.copies.catch(() => undefined);
      const { copies: _copies, fillPrice, ...rest } = res;
      reply = { ok: true, result: { ...rest, fillPrice: fillPrice?.toString() ?? null } };
    } catch (err) {
      const e = asWireError(err);
      if (logger && !(err instanceof AppError))
        logger.error({ err, masterAccountId: req.masterAccountId }, 'order request failed on the worker');
      reply = {
        ok: false,
        error: {
          code: e.code,
          message: e.message,
          retryable: e.retryable,
          ...(e.retryAfter !== undefined ? { retryAfter: e.retryAfter } : {}),
          ...(e.details !== undefined ? { details: e.details } : {}),
        },
      };
    }
    return JSON.stringify(reply);
  };
  return {
    attach(id) {
      if (!served.has(id)) served.set(id, bus.serve(orderSubject(id), answer));
    },
    detach(id) {
      served.get(id)?.stop();
      served.delete(id);
    },
    async drain(id) {
      const s = served.get(id);
      served.delete(id);
      await s?.drain();
    },
    detachAll() {
      for (const s of served.values()) s.stop();
      served.clear();
    },
  };
}

/**
 * What the api tells its client. A lease lost mid-order (the store refused this worker's write) may have come
 * after the Master's broker took the order: its outcome is the new owner's to settle by tag, so the client is told
 * to look, never that nothing happened. The worker's store unreachable is a retryable 503 (store_unavailable), as on
any route. Anything else unexpected stays a 500, and is logged here.
 */
function asWireError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof StaleLeaseError)
    return new AppError(
      'write_outcome_unknown',
      "this worker lost the Master account's lease while placing the order; the new owner settles it by its tag: list the account's trades before retrying",
    );
  // The worker's store went away before the Master's write (after it, OrderService answers write_outcome_unknown).
  if (isStoreUnavailable(err)) return storeUnavailable(err);
  return new AppError('internal_error', 'the worker failed to place the order');
}
