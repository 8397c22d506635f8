import { headMessage } from '../domain/receipts/chain.js';
import type { ReceiptKey } from './receipt-key.js';

interface ExportedReceipt {
  id: string;
  accountId: string;
  seq: number;
  day: string;
  intentId: string;
  prevHash: string;
  hash: string;
  body: string;
  createdAt: string;
}
interface ExportedHead {
  accountId: string;
  day: string;
  seq: number;
  hash: string;
  keyId: string;
  signature: string;
  signedAt: string;
}
/** What the `receipts.export` operation returns. */
export interface ExportData {
  account: { id: string; name: string; platform: string; number: string };
  from: string | null;
  to: string | null;
  prior: { seq: number; hash: string } | null;
  receipts: ExportedReceipt[];
  heads: ExportedHead[];
}

/**
 * The export a third party checks with the public key alone (docs/receipts.md, scripts/verify-receipts.mjs): the
 * receipts with their exact bytes, the day heads with the bytes their signatures cover, and the public keys.
 */
export function exportDocument(d: ExportData, key: Pick<ReceiptKey, 'current' | 'retired'>) {
  return {
    format: 'copytrade.receipts/1',
    account: d.account,
    from: d.from,
    to: d.to,
    publicKeys: [key.current, ...key.retired].map((k) => ({ keyId: k.keyId, algorithm: 'Ed25519', pem: k.pem })),
    prior: d.prior,
    receipts: d.receipts.map((r) => ({
      receiptId: r.id,
      seq: r.seq,
      day: r.day,
      intentId: r.intentId,
      prevHash: r.prevHash,
      hash: r.hash,
      body: r.body,
    })),
    heads: d.heads.map((h) => ({
      day: h.day,
      seq: h.seq,
      hash: h.hash,
      keyId: h.keyId,
      signature: h.signature,
      message: headMessage({ account: h.accountId, day: h.day, seq: h.seq, hash: h.hash, keyId: h.keyId }),
    })),
  };
}

const esc = (v: unknown): string => String(v ?? '-').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

interface Body {
  master: {
    symbol?: string;
    side?: string;
    volume?: string;
    price?: string;
    fillPrice?: string;
    positionId?: string;
    actionAt?: string;
  } | null;
  request: { tag: string; action: string; symbol: string; side: string; plannedVolume: string | null };
  answer: {
    state: string;
    skipReason: string | null;
    positionId: string | null;
    filledVolume: string | null;
    fillPrice: string | null;
    endedAt: string;
    latencyMs: unknown;
  };
  sizing: { rule?: { sizing?: { mode?: string } } } | null;
}

/** A page a person reads: one line per receipt, the day heads, and how to check it (the JSON is the proof). */
export function exportHtml(doc: ReturnType<typeof exportDocument>): string {
  const rows = doc.receipts
    .map((r) => {
      const b = JSON.parse(r.body) as Body;
      const m = b.master;
      return `<tr><td>${r.seq}</td><td>${esc(b.answer.endedAt)}</td><td>${esc(m ? `${m.side} ${m.volume} ${m.symbol} @ ${m.fillPrice ?? m.price ?? '-'} (#${m.positionId ?? '-'})` : '-')}</td><td>${esc(b.request.action)} ${esc(b.request.side)} ${esc(b.request.plannedVolume)} ${esc(b.request.symbol)}<br><code>${esc(b.request.tag)}</code></td><td>${esc(b.sizing?.rule?.sizing?.mode ?? '-')}</td><td>${esc(b.answer.state)}${b.answer.skipReason ? `<br>${esc(b.answer.skipReason)}` : ''}</td><td>${esc(b.answer.filledVolume)} @ ${esc(b.answer.fillPrice)} (#${esc(b.answer.positionId)})</td><td>${esc(JSON.stringify(b.answer.latencyMs ?? null))}</td><td><code>${esc(r.hash.slice(0, 16))}</code></td></tr>`;
    })
    .join('\n');
  const heads = doc.heads
    .map(
      (h) =>
        `<tr><td>${esc(h.day)}</td><td>${h.seq}</td><td><code>${esc(h.hash)}</code></td><td><code>${esc(h.keyId)}</code></td><td><code>${esc(h.signature)}</code></td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Copy receipts of ${esc(doc.account.name)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;text-align:left}code{font-size:12px}</style></head>
<body><h1>Copy receipts: ${esc(doc.account.name)} (${esc(doc.account.platform)} ${esc(doc.account.number)})</h1>
<p>Account <code>${esc(doc.account.id)}</code>, days ${esc(doc.from ?? 'first')} to ${esc(doc.to ?? 'last')}: ${doc.receipts.length} receipt(s).
This page is for reading; the JSON export beside it is the proof. Check it with the public key below and
<code>node verify-receipts.mjs export.json</code> (docs/receipts.md): every receipt must hash to its bytes and link to
the one before, and every day's head must carry a valid Ed25519 signature.</p>
<table><tr><th>#</th><th>Ended (UTC)</th><th>Master trade</th><th>Our request</th><th>Sizing</th><th>Outcome</th><th>Slave fill</th><th>Latency ms</th><th>Hash</th></tr>
${rows}
</table>
<h2>Signed day heads</h2>
<table><tr><th>Day</th><th>Last #</th><th>Hash</th><th>Key</th><th>Signature (Ed25519, base64)</th></tr>
${heads}
</table>
<h2>Public key${doc.publicKeys.length > 1 ? 's' : ''}</h2>
${doc.publicKeys.map((k) => `<p>Key <code>${esc(k.keyId)}</code></p><pre>${esc(k.pem)}</pre>`).join('\n')}
</body></html>
`;
}
