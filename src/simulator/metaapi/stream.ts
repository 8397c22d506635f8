import type { Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import type { SimBrokerApi, SimEvent } from '../contract.js';
import { ApiError } from './http.js';
import type { AccountRegistry } from './registry.js';
import { rpcAnswer, terminalDtos } from './rpc.js';
import { accountInformationDto, type CommentStore, dealDto, positionDto } from './wire.js';

/**
 * MetaApi's streaming API as the official SDK (metaApiWebsocket.client) speaks it: socket.io on a region's
 * streaming host (see hosts.ts), path `/ws`, `auth-token` in the query, Engine.IO 3 or 4. The client emits `request` packets (`subscribe`, `synchronize`,
 * `unsubscribe`); the server answers each with `response` (or `processingError`) and streams `synchronization`
 * packets: `authenticated` after a subscribe, then for a synchronize `synchronizationStarted`,
 * `accountInformation`, `positions`, `orders`, `historyOrders`, `deals`, `orderSynchronizationFinished`,
 * `dealSynchronizationFinished`, and from then on an `update` for every change of the account and a periodic
 * `status`. Every synchronization packet carries the stream's `sequenceNumber`, as the SDK's packet orderer expects.
 */

export interface MetaApiStreamDeps {
  broker: SimBrokerApi;
  registry: AccountRegistry;
  comments: CommentStore;
  token: string;
  /** Period of `status` packets on a subscribed account (the SDK declares an account lost after 60 s of silence). */
  statusMs: number;
  /** The region this streaming host serves: an account of another region is unknown here. */
  region: string;
}

/** Test hooks on the streaming front end: network faults the REST fault injector cannot express. */
export interface MetaApiStreamControl {
  /** Cuts every stream socket's transport (the client sees a transport close, as after a network cut). */
  drop(): void;
  /**
   * While on, new stream connections are refused (the client keeps retrying): `socketio` at the socket.io
   * handshake (a connect error naming the reason), `http` before it, as an Engine.IO request answered 403, which
   * is how a server that does not speak the client's protocol refuses it.
   */
  refuse(on: boolean, at?: 'socketio' | 'http'): void;
  /** Stream sockets open now. */
  connections(): number;
  close(): Promise<void>;
}

interface Subscription {
  simId: string;
  instanceIndex: number;
  /** Set once the client asked to synchronize: updates flow only on top of a snapshot it holds. */
  synchronizationId: string | null;
  sequenceNumber: number;
}

const HOST = 'ps-mpa-0';
const str = (v: unknown) => (typeof v === 'string' ? v : '');

export function attachMetaApiStream(http: HttpServer, deps: MetaApiStreamDeps): MetaApiStreamControl {
  const { broker, registry, comments } = deps;
  // The official SDK speaks Engine.IO 3 (it pins socket.io-client ~2.4); EIO 4 clients are served too.
  const io = new Server(http, {
    path: '/ws',
    serveClient: false,
    cors: { origin: false },
    allowEIO3: true,
    allowRequest: (_req, cb) => cb(refusing === 'http' ? 'refused' : null, refusing !== 'http'),
  });
  const subs = new Map<Socket, Map<string, Subscription>>();
  const sticky = new Map<Socket, { out: number; in: number }>();
  /**
   * The SDK's sticky-socket protocol (lib/packages/sticky-sockets): a client that sends `stickySocketConnectionId`
   * in the handshake query gets every event as `{index, data: [args]}` and sends its own the same way; the
   * SDK drops an event without `index`. A client without it gets plain socket.io events.
   */
  const emit = (socket: Socket, event: string, payload: unknown) => {
    const st = sticky.get(socket);
    if (st) socket.emit(event, { index: ++st.out, data: [payload] });
    else socket.emit(event, payload);
  };
  let refusing: false | 'socketio' | 'http' = false;

  io.use((socket, next) => {
    if (refusing === 'socketio') return next(new Error('service unavailable'));
    // The real server's answer to a bad token is not documented; the SDK's reading of it is an UnauthorizedError.
    if (socket.handshake.query['auth-token'] !== deps.token) return next(new Error('UnauthorizedError'));
    next();
  });

  const { dtoCtx, orderDtos } = terminalDtos({ broker, registry, comments });

  /** Terminal-state packets are numbered so a client can tell one was lost; `status` and `authenticated` are not. */
  const packet = (
    socket: Socket,
    accountId: string,
    sub: Subscription,
    body: Record<string, unknown>,
    numbered = true,
  ) => {
    const seq = numbered ? { sequenceNumber: ++sub.sequenceNumber, sequenceTimestamp: Date.now() } : {};
    emit(socket, 'synchronization', { ...body, accountId, instanceIndex: sub.instanceIndex, host: HOST, ...seq });
  };

  function synchronize(socket: Socket, accountId: string, sub: Subscription, req: Record<string, unknown>): void {
    const synchronizationId = str(req.requestId);
    sub.synchronizationId = synchronizationId;
    const { simId } = sub;
    const sim = broker.account(simId)!;
    const ctx = dtoCtx(simId);
    const since = (v: unknown) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : 0);
    const send = (body: Record<string, unknown>) => packet(socket, accountId, sub, { ...body, synchronizationId });
    send({ type: 'synchronizationStarted', specificationsUpdated: false, positionsUpdated: true, ordersUpdated: true });
    send({ type: 'accountInformation', accountInformation: accountInformationDto(broker, sim) });
    send({ type: 'positions', positions: broker.positions(simId).map((p) => positionDto(p, ctx.magic, comments)) });
    send({ type: 'orders', orders: orderDtos(simId, broker.orders(simId)) });
    const fromOrder = since(req.startingHistoryOrderTime);
    const history = broker
      .orders(simId, { includeHistory: true })
      .filter((o) => o.status !== 'pending' && Date.parse(o.updatedAt) >= fromOrder);
    send({ type: 'historyOrders', historyOrders: orderDtos(simId, history) });
    const fromDeal = since(req.startingDealTime);
    send({
      type: 'deals',
      deals: broker
        .deals(simId)
        .filter((d) => Date.parse(d.time) >= fromDeal)
        .map((d) => dealDto(d, ctx)),
    });
    send({ type: 'orderSynchronizationFinished' });
    send({ type: 'dealSynchronizationFinished' });
  }

  function onRequest(socket: Socket, raw: unknown): void {
    const req = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const requestId = str(req.requestId);
    const accountId = str(req.accountId);
    const answerError = (err: unknown) => {
      const e =
        err instanceof ApiError ? err : new ApiError(500, err instanceof Error ? err.message : 'internal error');
      const body = e.toReply().body as Record<string, unknown>;
      emit(socket, 'processingError', { ...body, requestId, accountId });
    };
    try {
      const mine = subs.get(socket)!;
      const instanceIndex = typeof req.instanceIndex === 'number' ? req.instanceIndex : 0;
      switch (req.type) {
        case 'subscribe': {
          if (registry.get(accountId).region !== deps.region)
            throw new ApiError(404, `Trading account with id ${accountId} not found`);
          const { sim } = registry.connected(accountId);
          const sub: Subscription = { simId: sim.id, instanceIndex, synchronizationId: null, sequenceNumber: 0 };
          mine.set(accountId, sub);
          emit(socket, 'response', { type: 'response', requestId, accountId, instanceIndex });
          packet(
            socket,
            accountId,
            sub,
            {
              type: 'authenticated',
              sessionId: str(req.sessionId) || undefined,
              replicas: 1,
            },
            false,
          );
          return;
        }
        case 'synchronize': {
          const sub = mine.get(accountId);
          if (!sub) throw new ApiError(404, `account ${accountId} is not subscribed on this connection`);
          emit(socket, 'response', { type: 'response', requestId, accountId, instanceIndex });
          synchronize(socket, accountId, sub, req);
          return;
        }
        case 'unsubscribe':
          mine.delete(accountId);
          emit(socket, 'response', { type: 'response', requestId, accountId, instanceIndex });
          return;
        default: {
          if (registry.get(accountId).region !== deps.region)
            throw new ApiError(404, `Trading account with id ${accountId} not found`);
          const answer = rpcAnswer({ broker, registry, comments }, accountId, req);
          if (!answer) throw new ApiError(400, `request type ${String(req.type)} is not served by the simulator`);
          emit(socket, 'response', { type: 'response', requestId, accountId, instanceIndex, ...answer });
          return;
        }
      }
    } catch (err) {
      answerError(err);
    }
  }

  io.on('connection', (socket) => {
    subs.set(socket, new Map());
    const q = socket.handshake.query;
    if (typeof q.stickySocketConnectionId === 'string' && q.stickySocketConnectionId !== '') {
      sticky.set(socket, { out: -1, in: -1 });
      // Sessions are not kept across connections: a restore is refused, and the SDK then opens a new session.
      if (q.restoreStickyConnection) socket.emit('restore_connection', { restored: false });
    }
    socket.on('request', (raw: unknown) => {
      const st = sticky.get(socket);
      if (!st) return onRequest(socket, raw);
      const env = (raw && typeof raw === 'object' ? raw : {}) as { index?: unknown; data?: unknown };
      // A resent packet (index already seen) is not run twice.
      if (typeof env.index !== 'number' || !Array.isArray(env.data) || env.index <= st.in) return;
      st.in = env.index;
      onRequest(socket, env.data[0]);
    });
    socket.on('disconnect', () => {
      subs.delete(socket);
      sticky.delete(socket);
    });
  });

  const updateOf = (simId: string, ev: SimEvent): Record<string, unknown> => {
    const ctx = dtoCtx(simId);
    if (ev.position) {
      return ev.kind === 'position_closed'
        ? { removedPositionIds: [ev.position.id] }
        : { updatedPositions: [positionDto(ev.position, ctx.magic, comments)] };
    }
    if (!ev.order) return {};
    const [dto] = orderDtos(simId, [ev.order]);
    if (ev.kind === 'order_filled' || ev.kind === 'order_cancelled') {
      const deals = broker.dealsOf(simId, { orderId: ev.order.id }).map((d) => dealDto(d, ctx));
      return { completedOrderIds: [ev.order.id], historyOrders: [dto], ...(deals.length ? { deals } : {}) };
    }
    return { updatedOrders: [dto] };
  };

  const offEvents = broker.onEvent((simId, ev) => {
    let body: Record<string, unknown> | null = null;
    for (const [socket, mine] of subs) {
      for (const [accountId, sub] of mine) {
        if (sub.simId !== simId || !sub.synchronizationId) continue;
        body ??= { type: 'update', ...updateOf(simId, ev) };
        packet(socket, accountId, sub, body);
      }
    }
  });

  const status = setInterval(() => {
    for (const [socket, mine] of subs) {
      for (const [accountId, sub] of mine) {
        packet(
          socket,
          accountId,
          sub,
          { type: 'status', connected: true, authenticated: true, healthStatus: {} },
          false,
        );
      }
    }
  }, deps.statusMs);
  status.unref();

  return {
    drop: () => {
      // Discarding the write buffer loses what was in flight, as a cut cable does.
      for (const socket of subs.keys()) socket.conn.close(true);
    },
    refuse: (on, at = 'socketio') => {
      refusing = on ? at : false;
    },
    connections: () => subs.size,
    close: async () => {
      clearInterval(status);
      offEvents();
      for (const socket of subs.keys()) socket.conn.close();
      // io.close() would close the shared HTTP server too; its owner does that.
      io.engine.close();
    },
  };
}
