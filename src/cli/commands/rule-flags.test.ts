import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { ruleOptions, rulePatchOf } from './rule-flags.js';

/** The flags as commander reads them, into the rule patch `rules set` and `rules preview` send. */
const patchOf = (...argv: string[]) => {
  const cmd = ruleOptions(new Command().exitOverride());
  cmd.parse(argv, { from: 'user' });
  return rulePatchOf(cmd.opts());
};

describe('rule flags: filters, symbol rules, minimum trade amount', () => {
  it('reads each into its field', () => {
    expect(
      patchOf(
        '--sides',
        'buy',
        '--include-magic',
        '1,2',
        '--exclude-comment',
        'news, hedge',
        '--symbol-suffix',
        '.m',
        '--master-symbol-suffix',
        '.a',
        '--override',
        'XAUUSD:multiplier=0.5,maxVolume=2',
        '--override',
        'BTCUSD:off',
        '--min-trade-amount',
        '1000',
      ),
    ).toEqual({
      sides: 'buy',
      includeMagic: [1, 2],
      excludeComments: ['news', 'hedge'],
      symbolSuffix: '.m',
      masterSymbolSuffix: '.a',
      symbolOverrides: { XAUUSD: { multiplier: '0.5', maxVolume: '2' }, BTCUSD: { copy: false } },
      minTradeAmount: '1000',
    });
    expect(patchOf('--no-overrides')).toEqual({ symbolOverrides: {} });
    expect(patchOf('--max-slippage-points', '50', '--override', 'XAUUSD:maxSlippagePoints=30')).toEqual({
      maxSlippagePoints: '50',
      symbolOverrides: { XAUUSD: { maxSlippagePoints: '30' } },
    });
    expect(patchOf('--multiplier', '2')).toEqual({ sizing: { mode: 'multiplier', multiplier: '2' } });
  });

  it('refuses what it cannot read, naming the flag', () => {
    expect(() => patchOf('--sides', 'long')).toThrow(/--sides must be one of both, buy, sell/);
    expect(() => patchOf('--include-magic', '1,x')).toThrow(/--include-magic takes magic numbers/);
    expect(() => patchOf('--override', 'XAUUSD')).toThrow(/--override takes SYMBOL:off/);
    expect(() => patchOf('--override', 'XAUUSD:lots=1')).toThrow(/--override takes/);
    expect(() => patchOf('--override', 'XAUUSD:volume=-1')).toThrow(
      /--override XAUUSD volume must be a positive decimal/,
    );
    expect(() => patchOf('--min-trade-amount', 'ten')).toThrow(/--min-trade-amount/);
  });
});
