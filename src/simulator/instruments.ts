import { dec } from '../domain/decimal.js';
import type { SimInstrument } from './contract.js';

/** An instrument plus what the simulated market needs to quote it. */
export interface SimInstrumentDef extends SimInstrument {
  /** Starting mid price. */
  initialMid: string;
  /** Spread in ticks. */
  spreadTicks: number;
  /** Currency profit is counted in before it is converted to the account currency. */
  quoteCurrency: string;
}

function fx(
  numericId: number,
  symbol: string,
  initialMid: string,
  tick: string,
  digits: number,
  spreadTicks: number,
): SimInstrumentDef {
  return {
    symbol,
    numericId,
    description: `${symbol.slice(0, 3)}/${symbol.slice(3)}`,
    volumeStep: dec('0.01'),
    minVolume: dec('0.01'),
    maxVolume: dec('100'),
    contractSize: dec('100000'),
    tickSize: dec(tick),
    digits,
    initialMid,
    spreadTicks,
    quoteCurrency: symbol.slice(3),
  };
}

export function defaultInstruments(): SimInstrumentDef[] {
  return [
    fx(1, 'EURUSD', '1.08000', '0.00001', 5, 6),
    fx(2, 'GBPUSD', '1.27000', '0.00001', 5, 8),
    fx(3, 'USDJPY', '150.000', '0.001', 3, 8),
    {
      symbol: 'XAUUSD',
      numericId: 4,
      description: 'Gold vs US Dollar',
      volumeStep: dec('0.01'),
      minVolume: dec('0.01'),
      maxVolume: dec('100'),
      contractSize: dec('100'),
      tickSize: dec('0.01'),
      digits: 2,
      initialMid: '2300.00',
      spreadTicks: 20,
      quoteCurrency: 'USD',
    },
    {
      symbol: 'US500',
      numericId: 5,
      description: 'US 500 Index',
      volumeStep: dec('0.1'),
      minVolume: dec('0.1'),
      maxVolume: dec('100'),
      contractSize: dec('1'),
      tickSize: dec('0.01'),
      digits: 2,
      initialMid: '5000.00',
      spreadTicks: 50,
      quoteCurrency: 'USD',
    },
  ];
}
