import type { Decimal } from '../../domain/decimal.js';
import type { Position } from '../../domain/types.js';
import type { SimBrokerApi } from '../contract.js';

export interface Guard {
  code: string;
  version: number;
}

/**
 * The protection orders of the simulated positions. The simulator keeps SL and TP as the position's levels; the DX
 * API shows each as a position-attached order with the orderCode the client gave it and a version that a PUT or
 * DELETE must name (If-Match). A level set at the broker itself gets a code of ours.
 */
export class DxGuards {
  private readonly byPosition = new Map<string, { sl?: Guard; tp?: Guard }>();

  constructor(private readonly broker: SimBrokerApi) {}

  guard(positionId: string, kind: 'sl' | 'tp'): Guard {
    return this.byPosition.get(positionId)?.[kind] ?? { code: `${kind}-${positionId}`, version: 1 };
  }

  remember(positionId: string, kind: 'sl' | 'tp', code: string): void {
    const g = this.byPosition.get(positionId) ?? {};
    g[kind] = { code, version: (g[kind]?.version ?? 0) + 1 };
    this.byPosition.set(positionId, g);
  }

  /** The open position and level a protection orderCode stands for, if any. */
  of(accountId: string, code: string): { pos: Position; kind: 'sl' | 'tp'; guard: Guard } | null {
    for (const pos of this.broker.positions(accountId))
      for (const kind of ['sl', 'tp'] as const) {
        if ((kind === 'sl' ? pos.stopLoss : pos.takeProfit) === null) continue;
        const guard = this.guard(pos.id, kind);
        if (guard.code === code) return { pos, kind, guard };
      }
    return null;
  }

  set(accountId: string, pos: Position, kind: 'sl' | 'tp', level: Decimal | null, code: string): void {
    this.broker.modifyPosition(accountId, pos.id, {
      stopLoss: kind === 'sl' ? level : pos.stopLoss,
      takeProfit: kind === 'tp' ? level : pos.takeProfit,
    });
    if (level !== null) this.remember(pos.id, kind, code);
    else delete this.byPosition.get(pos.id)?.[kind];
  }
}
