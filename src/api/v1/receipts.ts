import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, invalid, notFound } from '../../domain/errors.js';
import { headMessage } from '../../domain/receipts/chain.js';
import type { ReceiptHead, ReceiptRow } from '../../store/repos/receipts.js';
import { ownedAccount, type ApiDeps } from '../deps.js';
import { userOf } from '../plugins/auth.js';
import { OPEN, stdErrors } from '../schemas.js';
import type { RouteOpts } from './route-opts.js';
import { finishPage, NextCursor, pageQuery, readPage } from '../paging.js';
import { RECEIPTS_PAGE } from '../page-specs.js';

const OURS = { 'x-open-point': true } as const;
const DAY = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'a UTC day, YYYY-MM-DD' });

const ReceiptSchema = Type.Object(
  {
    receiptId: Type.String(),
    accountId: Type.String(),
    seq: Type.Integer({ description: "the receipt's place in its account's chain, from 1" }),
    day: Type.String({ description: "the UTC day it was sealed on: that day's signed head covers it" }),
    intentId: Type.String(),
    prevHash: Type.String({ description: 'hash of the receipt before (64 zeros for the first)' }),
    hash: Type.String({ description: 'SHA-256 hex of prevHash, a newline, and body' }),
    body: Type.String({ description: 'canonical JSON: the exact bytes hashed (docs/receipts.md)' }),
    createdAt: Type.String(),
  },
  { ...OPEN, ...OURS },
);
const HeadSchema = Type.Object(
  {
    accountId: Type.String(),
    day: Type.String(),
    seq: Type.Integer(),
    hash: Type.String(),
    keyId: Type.String(),
    signature: Type.String({ description: 'Ed25519 over `message`, base64' }),
    message: Type.String({ description: 'the signed bytes (canonical JSON)' }),
    signedAt: Type.String(),
  },
  { ...OPEN, ...OURS },
);
const KeySchema = Type.Object(
  {
    algorithm: Type.Literal('Ed25519'),
    keyId: Type.String(),
    publicKeyPem: Type.String(),
    retired: Type.Array(Type.Object({ keyId: Type.String(), publicKeyPem: Type.String() })),
  },
  { ...OPEN, ...OURS },
);

export const receiptJson = (r: ReceiptRow) => ({
  receiptId: r.id,
  accountId: r.accountId,
  seq: r.seq,
  day: r.day,
  intentId: r.intentId,
  prevHash: r.prevHash,
  hash: r.hash,
  body: r.body,
  createdAt: r.createdAt.toISOString(),
});
export const headJson = (h: ReceiptHead) => ({
  accountId: h.accountId,
  day: h.day,
  seq: h.seq,
  hash: h.hash,
  keyId: h.keyId,
  signature: h.signature,
  message: headMessage({ account: h.accountId, day: h.day, seq: h.seq, hash: h.hash, keyId: h.keyId }),
  signedAt: h.signedAt.toISOString(),
});

/** Receipts (docs/receipts.md): one receipt, an account's chain by day, a day's signed head, the public key. */
export async function receiptRoutes(app: FastifyInstance, deps: ApiDeps, o: RouteOpts): Promise<void> {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, security, prefix, hide } = o;
  const tags = ['Receipts'];
  const schema = (operationId: string, summary: string) => ({ operationId, hide, tags, security, summary, ...OURS });

  r.get(
    `${prefix}/receipts/:receipt_id`,
    {
      onRequest: auth,
      schema: {
        ...schema('getReceipt', 'One receipt of an ended ledger row'),
        params: Type.Object({ receipt_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: ReceiptSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const rc = await deps.store.receipts.get(req.params.receipt_id);
      // Another user's receipt is the same 404 as an unknown one.
      if (!rc || rc.userId !== userOf(req)) throw notFound('receipt');
      return receiptJson(rc);
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/receipts`,
    {
      onRequest: auth,
      schema: {
        ...schema(
          'listAccountReceipts',
          "One Slave account's receipts in chain order, sealed from `from` to `to` (UTC days)",
        ),
        params: Type.Object({ account_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object(
          { from: Type.Optional(DAY), to: Type.Optional(DAY), ...pageQuery(RECEIPTS_PAGE) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ receipts: Type.Array(ReceiptSchema), nextCursor: NextCursor }), ...stdErrors() },
      },
    },
    async (req, reply) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      const { from, to } = req.query;
      if (from && to && from > to) throw invalid('from must not be after to');
      const page = readPage(req.query, RECEIPTS_PAGE);
      const afterSeq = page.after === undefined ? 0 : Number(page.after);
      if (!Number.isSafeInteger(afterSeq)) throw invalid('cursor is not one this list gave');
      const rows = await deps.store.receipts.page(a.id, {
        afterSeq,
        limit: page.limit + 1,
        ...(from ? { fromDay: from } : {}),
        ...(to ? { toDay: to } : {}),
      });
      const { items, nextCursor } = finishPage(req, reply, rows, page, RECEIPTS_PAGE, (x) => String(x.seq));
      return { receipts: items.map(receiptJson), nextCursor };
    },
  );

  r.get(
    `${prefix}/accounts/:account_id/receipt-heads/:day`,
    {
      onRequest: auth,
      schema: {
        ...schema('getReceiptHead', "The signed head of one Slave account's chain for one UTC day"),
        // The day is checked after the account: another user's account is the same 404 whatever the day.
        params: Type.Object({
          account_id: Type.String({ minLength: 1, maxLength: 64 }),
          day: Type.String({ minLength: 1, maxLength: 10, description: 'a UTC day, YYYY-MM-DD' }),
        }),
        response: { 200: HeadSchema, ...stdErrors() },
      },
    },
    async (req) => {
      const a = await ownedAccount(deps, req, req.params.account_id, 'read');
      if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(req.params.day)) throw invalid('day must be a UTC day, YYYY-MM-DD');
      const h = await deps.store.receipts.head(a.id, req.params.day);
      if (!h) throw notFound('receipt head');
      return headJson(h);
    },
  );

  r.get(
    `${prefix}/receipt-key`,
    {
      onRequest: auth,
      schema: {
        ...schema('getReceiptKey', "The deployment's public key that signs receipt heads, and the keys it replaced"),
        response: { 200: KeySchema, ...stdErrors(503) },
      },
    },
    async () => {
      const k = deps.receiptKey;
      if (!k) throw new AppError('upstream_unavailable', 'this process holds no receipt key');
      return {
        algorithm: 'Ed25519' as const,
        keyId: k.current.keyId,
        publicKeyPem: k.current.pem,
        retired: k.retired.map((x) => ({ keyId: x.keyId, publicKeyPem: x.pem })),
      };
    },
  );
}
