#!/usr/bin/env node
// Checks a copytrade receipts export with the public key alone, with nothing but Node.js (18+): no copytrade code.
// Usage: node verify-receipts.mjs EXPORT.json [PUBLIC_KEY.pem]
// Without PUBLIC_KEY.pem it uses the keys inside the export; pass the key you got from the firm separately (GET
// /v1/receipt-key, or the operator) to make sure the export was not re-signed. See docs/receipts.md.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';

const [file, pemFile] = process.argv.slice(2);
if (!file) {
  console.error('usage: node verify-receipts.mjs EXPORT.json [PUBLIC_KEY.pem]');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(file, 'utf8'));
const keys = new Map();
const addKey = (pem) => {
  const key = createPublicKey(pem);
  const id = createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
  keys.set(id, key);
};
if (pemFile) addKey(readFileSync(pemFile, 'utf8'));
else for (const k of doc.publicKeys) addKey(k.pem);

const sha256 = (s) => createHash('sha256').update(s, 'utf8').digest('hex');
const fail = (what) => {
  console.error(`FAIL ${what}`);
  process.exit(1);
};

// 1. The chain: each receipt's hash is SHA-256 of the previous hash, "\n", and its body; each links to the one before.
let seq = doc.prior ? doc.prior.seq : 0;
let prev = doc.prior ? doc.prior.hash : '0'.repeat(64);
const lastOfDay = new Map();
for (const r of doc.receipts) {
  const name = `receipt #${r.seq} (${r.receiptId})`;
  if (r.seq !== seq + 1) fail(`${name}: expected #${seq + 1} (a receipt is missing or inserted)`);
  if (r.prevHash !== prev) fail(`${name}: does not link to the receipt before it`);
  if (sha256(`${r.prevHash}\n${r.body}`) !== r.hash) fail(`${name}: its bytes do not hash to its hash (edited)`);
  const body = JSON.parse(r.body);
  if (body.account !== doc.account.id || body.seq !== r.seq || body.day !== r.day)
    fail(`${name}: names another account, place or day`);
  lastOfDay.set(r.day, r);
  seq = r.seq;
  prev = r.hash;
}

// 2. The heads: each day's head is signed (Ed25519 over `message`) and names that day's last receipt.
for (const [day, last] of lastOfDay) {
  const h = doc.heads.find((x) => x.day === day);
  if (!h) fail(`day ${day}: no signed head`);
  const msg = JSON.parse(h.message);
  if (
    msg.account !== doc.account.id ||
    msg.day !== day ||
    msg.seq !== h.seq ||
    msg.hash !== h.hash ||
    msg.keyId !== h.keyId
  )
    fail(`day ${day}: the head's message does not say what the head says`);
  const key = keys.get(h.keyId);
  if (!key) fail(`day ${day}: signed by key ${h.keyId}, which is not the key given`);
  if (!verify(null, Buffer.from(h.message, 'utf8'), key, Buffer.from(h.signature, 'base64')))
    fail(`day ${day}: the signature does not verify`);
  if (h.seq !== last.seq || h.hash !== last.hash)
    fail(`day ${day}: the signed head names receipt #${h.seq}, the day's last receipt is #${last.seq}`);
}
console.log(
  `OK ${doc.receipts.length} receipt(s) of ${doc.account.id} over ${lastOfDay.size} day(s), every head signed`,
);
