import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { AppError } from '../../domain/errors.js';
import { dataDirOpt, keyFileOpt, runAdmin, type StoreFlags } from '../admin-store.js';
import { out } from '../output.js';

interface ReceiptFlags extends StoreFlags {
  receiptKeyFile?: string;
  from?: string;
  to?: string;
}

const receiptKeyOpt = [
  '--receipt-key-file <file>',
  'the receipt signing key (default $COPYTRADE_RECEIPT_KEY_FILE, else receipt.key beside the credential key file)',
] as const;

/** The receipt key file's keys, read before the store is opened: a missing file stops the command, nothing written. */
async function keysOf(o: ReceiptFlags) {
  const { loadReceiptKey } = await import('../../receipts/receipt-key.js');
  const cfg = loadConfig({
    ...(o.dataDir ? { dataDir: o.dataDir } : {}),
    ...(o.secretKeyFile ? { secretKeyFile: o.secretKeyFile } : {}),
  });
  const file = o.receiptKeyFile ? resolve(o.receiptKeyFile) : cfg.receiptKeyFile;
  if (!file)
    throw new AppError('invalid_request', 'an in-memory store has no receipt key file: pass --receipt-key-file');
  return loadReceiptKey(file, { create: false });
}

interface Verdict {
  accountId: string;
  receipts: number;
  days: string[];
  fault: { receiptId: string | null; seq: number; problem: string } | null;
  unsealed: number;
}

function verifyText(r: { ok: boolean; accounts: Verdict[] }): string {
  const lines = r.accounts.map((a) =>
    a.fault
      ? `FAIL ${a.accountId}: receipt #${a.fault.seq}${a.fault.receiptId ? ` (${a.fault.receiptId})` : ''}: ${a.fault.problem}`
      : `ok   ${a.accountId}: ${a.receipts} receipt(s) over ${a.days.length} day(s), heads signed` +
        (a.unsealed > 0 ? `; ${a.unsealed} ended row(s) not sealed yet` : ''),
  );
  if (lines.length === 0) lines.push('no receipts to verify');
  lines.push(r.ok ? 'verify: OK' : 'verify: FAILED');
  return lines.join('\n');
}

/** `copytrade verify` and `copytrade receipts ...` (docs/receipts.md): operator commands on the store. */
export function receiptCommands(program: Command): void {
  program
    .command('verify')
    .description(
      'check the receipts: recompute every chain, check the signed day heads, compare each receipt with its ledger ' +
        'row and run its sizing again; names the first receipt that fails (exit 1). Writes nothing',
    )
    .option('--account <id>', 'one Slave account (default: every account with receipts)')
    .option('--from <day>', 'first UTC day, YYYY-MM-DD')
    .option('--to <day>', 'last UTC day, YYYY-MM-DD')
    .option(...dataDirOpt)
    .option(...keyFileOpt)
    .option(...receiptKeyOpt)
    .option('--json')
    .action(async (o: ReceiptFlags & { account?: string }) => {
      const key = await keysOf(o);
      const r = (await runAdmin(o, 'receipts.verify', {
        account: o.account,
        from: o.from,
        to: o.to,
        publicKeys: [key.current, ...key.retired].map((k) => k.pem),
      })) as { ok: boolean; accounts: Verdict[] };
      out(o.json, r, () => verifyText(r));
      if (!r.ok) process.exitCode = 1;
    });

  const receipts = program.command('receipts').description('verifiable receipts of the copy ledger (docs/receipts.md)');
  receipts
    .command('export')
    .description("write one account's receipts of a period as JSON (the proof) and, with --html, a page to read")
    .argument('<account>', 'the Slave account id')
    .option('--from <day>', 'first UTC day, YYYY-MM-DD')
    .option('--to <day>', 'last UTC day, YYYY-MM-DD')
    .option('--html', 'also write a readable HTML page')
    .option('--out <dir>', 'folder to write to', '.')
    .option(...dataDirOpt)
    .option(...keyFileOpt)
    .option(...receiptKeyOpt)
    .option('--json')
    .action(async (account: string, o: ReceiptFlags & { html?: boolean; out: string }) => {
      const key = await keysOf(o);
      const { exportDocument, exportHtml } = await import('../../receipts/export.js');
      const data = (await runAdmin(o, 'receipts.export', { account, from: o.from, to: o.to })) as Parameters<
        typeof exportDocument
      >[0];
      const doc = exportDocument(data, key);
      const base = join(resolve(o.out), `receipts-${account}-${o.from ?? 'start'}-${o.to ?? 'end'}`);
      writeFileSync(`${base}.json`, `${JSON.stringify(doc, null, 2)}\n`);
      const files = [`${base}.json`];
      if (o.html) {
        writeFileSync(`${base}.html`, exportHtml(doc));
        files.push(`${base}.html`);
      }
      out(
        o.json,
        { files, receipts: doc.receipts.length },
        `${doc.receipts.length} receipt(s) written: ${files.join(', ')}`,
      );
    });

  receipts
    .command('rotate-key')
    .description(
      'replace the receipt signing key; the old public key stays in the file so heads it signed still verify. ' +
        'Restart the service after (it signs with the key it started with)',
    )
    .option(...dataDirOpt)
    .option(...keyFileOpt)
    .option(...receiptKeyOpt)
    .option('--json')
    .action(async (o: ReceiptFlags) => {
      const old = await keysOf(o);
      const { rotateReceiptKey } = await import('../../receipts/receipt-key.js');
      const k = rotateReceiptKey(old.file!);
      out(
        o.json,
        { keyId: k.current.keyId, retired: k.retired.map((x) => x.keyId) },
        `new receipt key ${k.current.keyId} in ${k.file}; ${k.retired.length} retired key(s) kept for verifying`,
      );
    });
}
