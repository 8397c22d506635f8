import type { Decimal } from 'decimal.js';
import type { Capabilities, CapabilityFlag } from '../domain/capabilities.js';
import {
  denied,
  type BrokerAdapter,
  type DeniedOutcome,
  type ModifyOrderChange,
  type PlaceOrderRequest,
} from './adapter.js';

/**
 * Part of the adapter kit: an adapter whose platform lacks a write (a `has` flag that is false) refuses it
 * here, before anything reaches the broker, with `denied` `capability_missing` naming the flag. The planner
 * already skips such copies (engine/capability-check.ts `deniedByCapability`); this keeps a direct caller (the order
 * route, a panic close, a test) from sending what the platform cannot do. 'emulated' passes: the adapter
 * builds it from simpler calls. `capabilities` is read on every call, so an adapter that learns its account
 * (netting or hedging) on the first read is guarded by what it knows now.
 */
export function guardCapabilities(
  adapter: BrokerAdapter,
  capabilities: () => Capabilities = () => adapter.capabilities,
): BrokerAdapter {
  const lacks = (flag: CapabilityFlag) => capabilities().has[flag] === false;
  const refuse = (flag: CapabilityFlag): DeniedOutcome =>
    denied('capability_missing', `${flag}: the ${capabilities().platform} account cannot do this`);
  const placeRefusal = (req: PlaceOrderRequest): DeniedOutcome | null => {
    if (lacks(req.type === 'market' ? 'marketOrders' : 'pendingOrders'))
      return refuse(req.type === 'market' ? 'marketOrders' : 'pendingOrders');
    if (req.type !== 'market' && !capabilities().orderTypes.includes(req.type))
      return denied(
        'capability_missing',
        `orderTypes: the ${capabilities().platform} account takes no ${req.type} orders`,
      );
    if (req.stopLoss && lacks('stopLossOnOpen')) return refuse('stopLossOnOpen');
    if (req.takeProfit && lacks('takeProfitOnOpen')) return refuse('takeProfitOnOpen');
    return null;
  };
  const guarded: BrokerAdapter = {
    get capabilities() {
      return capabilities();
    },
    accountInfo: () => adapter.accountInfo(),
    instrument: (symbol) => adapter.instrument(symbol),
    listPositions: () => adapter.listPositions(),
    listOrders: (query) =>
      adapter.listOrders(query && lacks('orderHistory') ? { ...query, includeHistory: false } : query),
    placeOrder: async (req) => placeRefusal(req) ?? adapter.placeOrder(req),
    modifyPosition: async (id, change) =>
      lacks('modifyPositionSlTp') ? refuse('modifyPositionSlTp') : adapter.modifyPosition(id, change),
    closePosition: async (id: string, volume?: Decimal) =>
      volume !== undefined && lacks('partialClose') ? refuse('partialClose') : adapter.closePosition(id, volume),
    cancelOrder: async (id) => (lacks('cancelPendingOrder') ? refuse('cancelPendingOrder') : adapter.cancelOrder(id)),
    findByTag: (tag) => adapter.findByTag(tag),
    close: () => adapter.close(),
  };
  const { listDeals, listSymbols, modifyOrder, quote, subscribe, tagIndex, writeRatePerSecond } = adapter;
  if (listSymbols) guarded.listSymbols = () => listSymbols.call(adapter);
  if (listDeals) guarded.listDeals = (since) => listDeals.call(adapter, since);
  if (writeRatePerSecond) guarded.writeRatePerSecond = () => writeRatePerSecond.call(adapter);
  if (tagIndex) guarded.tagIndex = (since) => tagIndex.call(adapter, since);
  if (modifyOrder && !lacks('modifyPendingOrder'))
    guarded.modifyOrder = (id: string, change: ModifyOrderChange) => modifyOrder.call(adapter, id, change);
  if (quote && capabilities().has.quotes) guarded.quote = (symbol) => quote.call(adapter, symbol);
  if (subscribe) guarded.subscribe = (listener) => subscribe.call(adapter, listener);
  return guarded;
}
