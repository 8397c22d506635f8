import { randomBytes } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import type { Order, Position } from '../../domain/types.js';
import { arr, obj, parseOrder, parsePosition } from './parse.js';

/**
 * MetaApi's streaming API for one account, on the wire as the official SDK (metaApiWebsocket.client) speaks it:
 * socket.io at the client-API host, path `/ws`, query `auth-token`, `clientId`, `protocol: 3`. On every
 * (re)connect it sends `subscribe`; on `authenticated` it sends `synchronize` and collects the terminal state
 * (`positions`, `orders`, `historyOrders`) up to `dealSynchronizationFinished`; from then on each `update`
 * is handed over as it arrives. A gap in `sequenceNumber` asks for a new synchronization, as the SDK's packet
 * orderer does. It never decides what a change means: the watcher diffs states.
 */

export interface MtStreamSnapshot {
  positions: Position[];
  /** Pending orders. */
  orders: Order[];
  /** Orders that reached a final state since the previous synchronization (or since the stream started). */
  historyOrders: Order[];
}

export interface MtStreamUpdate {
  updatedPositions: Position[];
  removedPositionIds: string[];
  updatedOrders: Order[];
  completedOrderIds: string[];
  historyOrders: Order[];
}

export interface MtStreamEvents {
  synchronized(snapshot: MtStreamSnapshot): void;
  update(update: MtStreamUpdate): void;
  /** The stream stopped being a true picture of the account (socket lost, terminal disconnected, packet lost). */
  down(reason: string): void;
  error?(err: unknown): void;
}

export interface MtStreamOptions {
  clientUrl: string;
  token: string;
  accountId: string;
  /** socket.io reconnection delays (the SDK's: 1 s growing to 5 s). */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Re-sent subscribe when no `authenticated` came back in this time, or after a refused one. */
  subscribeRetryMs?: number;
}

/** What a watcher needs of a stream; the MetaApi one below, or a test double. */
export interface MtStream {
  close(): void;
}

const randomId = () => randomBytes(16).toString('hex');
type Packet = Record<string, unknown>;

export function openMetaApiStream(opts: MtStreamOptions, events: MtStreamEvents): MtStream {
  const clientId = Math.random();
  const socket: Socket = io(opts.clientUrl, {
    path: '/ws',
    reconnection: true,
    reconnectionDelay: opts.reconnectMinMs ?? 1000,
    reconnectionDelayMax: opts.reconnectMaxMs ?? 5000,
    reconnectionAttempts: Number.POSITIVE_INFINITY,
    extraHeaders: { 'Client-Id': String(clientId) },
    query: { 'auth-token': opts.token, clientId: String(clientId), protocol: '3' },
  });
  const retryMs = opts.subscribeRetryMs ?? 5000;
  let sessionId = '';
  let synchronizationId: string | null = null;
  let collecting: { started: boolean; positions?: Position[]; orders?: Order[]; historyOrders: Order[] } | null = null;
  /** Updates that arrive while a synchronization is being collected (after it started) apply on top of its state. */
  let held: MtStreamUpdate[] = [];
  let live = false;
  let lastSeq: number | null = null;
  let lastSyncAt: Date | null = null;
  let retry: NodeJS.Timeout | null = null;
  let closed = false;

  const request = (body: Packet) =>
    socket.emit('request', {
      ...body,
      accountId: opts.accountId,
      application: 'MetaApi',
      instanceIndex: 0,
      timestamps: { clientProcessingStarted: new Date().toISOString() },
    });
  const goDown = (reason: string) => {
    synchronizationId = null;
    collecting = null;
    held = [];
    if (!live) return;
    live = false;
    events.down(reason);
  };
  /** One pending retry at a time; `whenConnected: false` for the ones that reconnect the socket itself. */
  const later = (fn: () => void, whenConnected = true) => {
    if (retry) clearTimeout(retry);
    retry = setTimeout(() => {
      retry = null;
      if (!closed && socket.connected === whenConnected) fn();
    }, retryMs);
    retry.unref();
  };
  const subscribe = () => {
    sessionId = randomId();
    lastSeq = null;
    request({ type: 'subscribe', requestId: randomId(), sessionId });
    // Not authenticated in time (the account not deployed yet, a lost packet): ask again, as the SDK does.
    later(subscribe);
  };
  const synchronize = (host: unknown) => {
    synchronizationId = randomId();
    collecting = { started: false, historyOrders: [] };
    // History since the last synchronization covers orders that left the book while we were away.
    const since = (lastSyncAt ?? new Date()).toISOString();
    request({
      type: 'synchronize',
      requestId: synchronizationId,
      host,
      startingHistoryOrderTime: since,
      startingDealTime: since,
    });
  };

  const parseUpdate = (p: Packet): MtStreamUpdate => ({
    updatedPositions: list(p.updatedPositions).map(parsePosition),
    removedPositionIds: list(p.removedPositionIds).map(String),
    updatedOrders: pending(p.updatedOrders),
    completedOrderIds: list(p.completedOrderIds).map(String),
    historyOrders: final(p.historyOrders),
  });

  function onPacket(p: Packet): void {
    if (p.accountId !== opts.accountId) return;
    if (typeof p.sequenceNumber === 'number') {
      const gap = lastSeq !== null && p.sequenceNumber !== lastSeq + 1;
      lastSeq = p.sequenceNumber;
      if (gap && synchronizationId) {
        goDown('a stream packet was lost');
        synchronize(p.host);
        return;
      }
    }
    const ours = p.synchronizationId === undefined || p.synchronizationId === synchronizationId;
    switch (p.type) {
      case 'authenticated':
        if (p.sessionId !== undefined && p.sessionId !== sessionId) return;
        if (retry) clearTimeout(retry);
        goDown('resubscribed');
        synchronize(p.host);
        return;
      case 'disconnected':
        // The terminal lost its broker: the state is stale until a new subscription synchronizes it.
        goDown('terminal disconnected');
        later(subscribe);
        return;
      case 'synchronizationStarted':
        if (ours && collecting) collecting.started = true;
        return;
      case 'positions':
        if (ours && collecting) collecting.positions = list(p.positions).map(parsePosition);
        return;
      case 'orders':
        if (ours && collecting) collecting.orders = pending(p.orders);
        return;
      case 'historyOrders':
        if (ours && collecting) collecting.historyOrders.push(...final(p.historyOrders));
        return;
      case 'dealSynchronizationFinished': {
        if (!ours || !collecting?.positions || !collecting.orders) return;
        const { positions, orders, historyOrders } = collecting;
        collecting = null;
        live = true;
        lastSyncAt = new Date();
        events.synchronized({ positions, orders, historyOrders });
        for (const u of held) events.update(u);
        held = [];
        return;
      }
      case 'update': {
        if (!synchronizationId) return;
        const u = parseUpdate(p);
        if (live) events.update(u);
        // Before the synchronization started, an update predates its state: applying it after would go back in time.
        else if (collecting?.started) held.push(u);
        return;
      }
      default:
        return;
    }
  }

  socket.on('connect', subscribe);
  socket.on('disconnect', (reason) => {
    goDown(`socket ${reason}`);
    // A server-side disconnect is final for socket.io-client; the SDK reconnects anyway.
    if (reason === 'io server disconnect' && !closed) later(() => socket.connect(), false);
  });
  socket.on('connect_error', (err) => {
    events.error?.(err);
    // Refused at the handshake (socket.active false): socket.io-client gives up there, the SDK tries again later.
    if (!socket.active && !closed) later(() => socket.connect(), false);
  });
  socket.on('synchronization', (data: unknown) => {
    try {
      onPacket(obj(typeof data === 'string' ? JSON.parse(data) : data, 'synchronization packet'));
    } catch (err) {
      // An unreadable packet means the picture may be wrong: start over from a fresh synchronization.
      events.error?.(err);
      goDown('unreadable packet');
      if (socket.connected) later(subscribe);
    }
  });
  socket.on('processingError', (data: unknown) => {
    const p = (data && typeof data === 'object' ? data : {}) as Packet;
    events.error?.(new Error(`MetaApi stream request failed: ${String(p.error)}: ${String(p.message)}`));
    if (p.requestId === synchronizationId) {
      goDown('synchronization refused');
      later(subscribe);
    }
  });

  return {
    close: () => {
      closed = true;
      if (retry) clearTimeout(retry);
      live = false;
      socket.removeAllListeners();
      socket.close();
    },
  };
}

const list = (v: unknown): unknown[] => (v === undefined || v === null ? [] : arr(v, 'packet list'));
const pending = (v: unknown): Order[] =>
  list(v)
    .map((o) => parseOrder(o, true))
    .filter((o): o is Order => o !== null);
const final = (v: unknown): Order[] =>
  list(v)
    .map((o) => parseOrder(o))
    .filter((o): o is Order => o !== null);
