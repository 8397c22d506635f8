import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { TokenStoreState } from './ctrader/tokens.js';
import type { MetaApiAccount } from './metaapi/registry.js';
import type { Keeper } from './keeper.js';

interface FileShape {
  version: 1;
  stateId: string;
  ctrader: TokenStoreState | null;
  metaapi: MetaApiAccount[] | null;
}

/**
 * What the simulated upstreams keep beside the market across a restart of the simulator process, as real ones
 * do: the cTrader ID's OAuth tokens and MetaApi's provisioned accounts (`upstreams.json`, rewritten atomically and
 * fsync'ed on each change; they change on a connection, not on a trade). `stateId` names this kept state: a
 * client that recorded it knows the credentials it holds still work here, so the demo's restart skips
 * re-linking its accounts. A fresh market (no snapshot) starts a fresh state: old tokens name no account.
 */
export class UpstreamState {
  readonly stateId: string;
  private data: FileShape;

  constructor(
    private readonly file: string,
    marketIsFresh: boolean,
  ) {
    const old = !marketIsFresh && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as FileShape) : null;
    this.data = old?.version === 1 ? old : { version: 1, stateId: randomUUID(), ctrader: null, metaapi: null };
    this.stateId = this.data.stateId;
    if (!old) this.write();
  }

  keeper<K extends 'ctrader' | 'metaapi'>(part: K): Keeper<NonNullable<FileShape[K]>> {
    return {
      initial: this.data[part] as NonNullable<FileShape[K]> | null,
      save: (state) => {
        this.data = { ...this.data, [part]: state };
        this.write();
      },
    };
  }

  private write(): void {
    const tmp = `${this.file}.tmp`;
    rmSync(tmp, { force: true });
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(this.data)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
  }
}
