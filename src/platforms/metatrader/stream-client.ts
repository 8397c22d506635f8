import { randomBytes } from 'node:crypto';
import io, { type SocketV2 } from 'socket.io-client-v2';
import type { Order, Position } from '../../domain/types.js';
import { arr, obj, parseOrder, parsePosition } from './parse.js';

/**
 * MetaApi's streaming API for one account, on the wire as the official SDK (metaapi.cloud-sdk 29.x,
 * lib/clients/metaApi/metaApiWebsocket.client.ts `_createSocket`, lib/packages/sticky-sockets) speaks it:
 * socket.io-client 2 (Engine.IO 3, polling then upgrade) at the account's region streaming host, path `/ws`,
 * header `Client-Id`, query `auth-token`, `clientId`, `protocol: 3` and `stickySocketConnectionId`; with that
 * last one every event both ways is the sticky envelope `{index, data: [args]}` and an event without `index` is
 * dropped. Like the SDK's sticky socket, socket.io's own reconnection is off: a lost socket is replaced by a new
 * one (a new session) after a growing delay. On every connect it sends `subscribe`; on `authenticated` it sends `synchronize` and collects the terminal state
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
  /** The streaming base, or how to find it (the account's region host, see hosts.ts); asked on every connect. */
  clientUrl: string | (() => Promise<string>);
  token: string;
  accountId: string;
  /** Delays before a new socket replaces a lost one (the SDK's: 1 s growing to 5 s). */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Re-sent subscribe when no `authenticated` came back in this time, or after a refused one. */
  subscribeRetryMs?: number;
  /** Handshake timeout of one socket. */
  connectTimeoutMs?: number;
}

/** What a watcher needs of a stream; the MetaApi one below, or a test double. */
export interface MtStream {
  close(): void;
}

const randomId = () => randomBytes(16).toString('hex');
type Packet = Record<string, unknown>;

export function openMetaApiStream(opts: MtStreamOptions, events: MtStreamEvents): MtStream {
  let socket: SocketV2 | null = null;
  /** Sticky envelope counters of the current socket (each socket is a new sticky session). */
  let sent = -1;
  let reconnectMs = opts.reconnectMinMs ?? 1000;
  let reconnectTimer: NodeJS.Timeout | null = null;
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

  const request = (body: Packet) => {
    if (!socket?.connected) return;
    const packet = {
      ...body,
      accountId: opts.accountId,
      application: 'MetaApi',
      instanceIndex: 0,
      timestamps: { clientProcessingStarted: new Date().toISOString() },
    };
    socket.emit('request', { index: ++sent, data: [packet] });
  };
  const goDown = (reason: string) => {
    synchronizationId = null;
    collecting = null;
    held = [];
    if (!live) return;
    live = false;
    events.down(reason);
  };
  /** One pending resubscribe at a time, run only while the socket is still up. */
  const later = (fn: () => void) => {
    if (retry) clearTimeout(retry);
    retry = setTimeout(() => {
      retry = null;
      if (!closed && socket?.connected) fn();
    }, retryMs);
    retry.unref();
  };
  const subscribe = () => {
    sessionId = randomId();
    lastSeq = null;
    request({ type: 'subscribe', requestId: randomId(), sessionId, instanceIndex: 0 });
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
      version: 2,
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

  /** The sticky envelope's payload, or undefined for an event without `index` (dropped, as the SDK does). */
  const unwrap = (raw: unknown): unknown => {
    const env = raw && typeof raw === 'object' ? (raw as { index?: unknown; data?: unknown }) : null;
    if (!env || typeof env.index !== 'number' || !Array.isArray(env.data)) return undefined;
    return env.data[0];
  };
  const onSynchronization = (data: unknown) => {
    if (data === undefined) return;
    try {
      onPacket(obj(typeof data === 'string' ? JSON.parse(data) : data, 'synchronization packet'));
    } catch (err) {
      // An unreadable packet means the picture may be wrong: start over from a fresh synchronization.
      events.error?.(err);
      goDown('unreadable packet');
      later(subscribe);
    }
  };
  const onProcessingError = (data: unknown) => {
    if (data === undefined) return;
    const p = (data && typeof data === 'object' ? data : {}) as Packet;
    events.error?.(new Error(`MetaApi stream request failed: ${String(p.error)}: ${String(p.message)}`));
    if (p.requestId === synchronizationId) {
      goDown('synchronization refused');
      later(subscribe);
    }
  };

  /** Drops the socket and opens a new one after the current delay (which then grows, as the SDK's failover). */
  const replace = (reason: string, err?: unknown) => {
    if (err !== undefined) events.error?.(err);
    goDown(reason);
    if (socket) {
      socket.removeAllListeners();
      socket.close();
      socket = null;
    }
    if (closed || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      void connect();
    }, reconnectMs);
    reconnectTimer.unref();
    reconnectMs = Math.min(reconnectMs * 2, opts.reconnectMaxMs ?? 5000);
  };

  const connect = async () => {
    let url: string;
    try {
      url = typeof opts.clientUrl === 'string' ? opts.clientUrl : await opts.clientUrl();
    } catch (err) {
      replace('stream host unknown', err);
      return;
    }
    if (closed) return;
    const clientId = Math.random();
    sent = -1;
    const s = io(url, {
      path: '/ws',
      forceNew: true,
      reconnection: false,
      timeout: opts.connectTimeoutMs ?? 60_000,
      extraHeaders: { 'Client-Id': String(clientId) },
      query: {
        'auth-token': opts.token,
        clientId: String(clientId),
        protocol: '3',
        stickySocketConnectionId: randomBytes(8).toString('hex'),
      },
    });
    socket = s;
    s.on('connect', () => {
      reconnectMs = opts.reconnectMinMs ?? 1000;
      subscribe();
    });
    s.on('disconnect', (reason: string) => replace(`socket ${reason}`));
    // Refused at the handshake (HTTP 4xx, a middleware error) or never answered: a new socket, later.
    s.on('connect_error', (err: unknown) => replace('stream refused', err));
    s.on('connect_timeout', () => replace('stream connect timeout', new Error('MetaApi stream connect timed out')));
    s.on('error', (err: unknown) => replace('stream error', err instanceof Error ? err : new Error(String(err))));
    s.on('synchronization', (raw: unknown) => onSynchronization(unwrap(raw)));
    s.on('processingError', (raw: unknown) => onProcessingError(unwrap(raw)));
  };
  void connect();

  return {
    close: () => {
      closed = true;
      if (retry) clearTimeout(retry);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      live = false;
      socket?.removeAllListeners();
      socket?.close();
      socket = null;
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
