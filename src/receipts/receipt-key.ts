import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A public key that signed receipt heads: its id is the first 16 hex digits of SHA-256 over its DER (SPKI). */
export interface ReceiptPublicKey {
  keyId: string;
  pem: string;
  key: KeyObject;
}

/**
 * The deployment's receipt signing key (Ed25519) and the public keys of the keys it replaced, so heads signed before
 * a rotation still verify. The file holds the private key (PKCS#8 PEM) then the retired public keys (SPKI PEM).
 */
export interface ReceiptKey {
  file: string | null;
  current: ReceiptPublicKey;
  retired: ReceiptPublicKey[];
  sign(message: string): string;
}

const BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----/g;

function publicOf(key: KeyObject): ReceiptPublicKey {
  const pub = key.type === 'public' ? key : createPublicKey(key);
  const der = pub.export({ type: 'spki', format: 'der' });
  return {
    keyId: createHash('sha256').update(der).digest('hex').slice(0, 16),
    pem: pub.export({ type: 'spki', format: 'pem' }).toString(),
    key: pub,
  };
}

function fromPrivate(file: string | null, priv: KeyObject, retired: ReceiptPublicKey[]): ReceiptKey {
  return {
    file,
    current: publicOf(priv),
    retired,
    sign: (message) => sign(null, Buffer.from(message, 'utf8'), priv).toString('base64'),
  };
}

/** Written whole, mode 0600, through a rename: a crash never leaves half a key. */
function writeKeyFile(file: string, priv: KeyObject, retired: ReceiptPublicKey[]): void {
  mkdirSync(dirname(file), { recursive: true });
  const text = [priv.export({ type: 'pkcs8', format: 'pem' }).toString(), ...retired.map((r) => r.pem)].join('');
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}

/** Thrown when a verify or an export needs the key file and it is not there: nothing is written then. */
export class ReceiptKeyMissing extends Error {
  constructor(readonly file: string) {
    super(
      `the receipt key file ${file} does not exist: without it the signed heads cannot be checked ` +
        '(set COPYTRADE_RECEIPT_KEY_FILE to where it is); nothing was written',
    );
    this.name = 'ReceiptKeyMissing';
  }
}

/**
 * Reads the receipt key file, or creates it on first use when `create` (the service's sealer); a verify passes
 * create: false and gets a clear error when it is missing. `file` null (an in-memory store): a key for this process.
 */
export function loadReceiptKey(file: string | null, opts: { create: boolean }): ReceiptKey {
  if (!file) return fromPrivate(null, generateKeyPairSync('ed25519').privateKey, []);
  if (!existsSync(file)) {
    if (!opts.create) throw new ReceiptKeyMissing(file);
    writeKeyFile(file, generateKeyPairSync('ed25519').privateKey, []);
  }
  const blocks = readFileSync(file, 'utf8').match(BLOCK) ?? [];
  const privPem = blocks.find((b) => b.startsWith('-----BEGIN PRIVATE KEY-----'));
  if (!privPem) throw new Error(`${file} holds no private key (PKCS#8 PEM)`);
  const priv = createPrivateKey(privPem);
  if (priv.asymmetricKeyType !== 'ed25519')
    throw new Error(`${file} holds a ${priv.asymmetricKeyType} key, not Ed25519`);
  const retired = blocks
    .filter((b) => b.startsWith('-----BEGIN PUBLIC KEY-----'))
    .map((b) => publicOf(createPublicKey(b)));
  return fromPrivate(file, priv, retired);
}

/** A new signing key; the old one's public key is kept in the file so its heads still verify. */
export function rotateReceiptKey(file: string): ReceiptKey {
  const old = loadReceiptKey(file, { create: false });
  const priv = generateKeyPairSync('ed25519').privateKey;
  const retired = [old.current, ...old.retired];
  writeKeyFile(file, priv, retired);
  return fromPrivate(file, priv, retired);
}

/** Checks a head signature against the keys given (the one whose id the head names). */
export function verifyHead(
  keys: readonly ReceiptPublicKey[],
  keyId: string,
  message: string,
  signature: string,
): 'ok' | 'unknown_key' | 'bad_signature' {
  const k = keys.find((x) => x.keyId === keyId);
  if (!k) return 'unknown_key';
  return verify(null, Buffer.from(message, 'utf8'), k.key, Buffer.from(signature, 'base64')) ? 'ok' : 'bad_signature';
}

export const publicKeyFromPem = (pem: string): ReceiptPublicKey => publicOf(createPublicKey(pem));
