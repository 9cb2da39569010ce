/**
 * The SP's own encryption keys, one set per connection (table `saml_sp_keys`): an RSA-2048 key
 * pair and a self-signed X.509 certificate the IdP encrypts assertions to. Per connection, not per
 * realm: each connection already has its own SP entity id and metadata, so each IdP (Okta, Entra
 * ID…) is given a certificate of its own, an organization's administrator rotates and retires
 * their connection's key without touching any other organization's IdP, and a key's compromise
 * reaches one organization only.
 *
 * The private key is stored as svc stores the federation plugin's client secrets: PKCS#8 sealed
 * (AES-256-GCM) under a subject key of its own (`SubjectCrypto`, the key's id as subject), so
 * retiring a key destroys its subject key and the sealed private key with it. The private key is
 * never logged and never leaves this module except as a non-extractable WebCrypto key.
 *
 * Rotation: every key that is not retired is active; all are published in the SP metadata
 * (`KeyDescriptor use="encryption"`, newest first: the newest is the *current* key) and all
 * decrypt, so an IdP moves from the previous certificate to the current one at its own pace. At
 * most {@link MAX_ACTIVE_KEYS} are active at once.
 *
 * @module
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  Certificate,
  Name,
  RelativeDistinguishedName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from "@peculiar/asn1-x509";
import { type PluginContext, type PluginSql, randomUuid, type Storage, SubjectCrypto } from "../../mod.ts";

/** The most keys a connection holds at once (each is tried when decrypting). */
export const MAX_ACTIVE_KEYS = 3;
/** How long a new key's certificate is valid (IdPs encrypt to it; svc does not check its dates). */
const CERTIFICATE_LIFETIME_MS = 10 * 365 * 24 * 3600_000;
const SHA256_WITH_RSA = "1.2.840.113549.1.1.11";
const COMMON_NAME = "2.5.4.3";

/** An SP encryption key as the API shows it (its public half only). */
export interface SpKey {
  readonly id: string;
  readonly connectionId: string;
  /** The self-signed certificate, base64 DER. */
  readonly certificate: string;
  readonly createdAt: Date;
}

/** A key able to decrypt (the private half, non-extractable), for the ACS only. */
export interface DecryptionKey {
  readonly id: string;
  /** The PKCS#8 private key; imported for the key transport algorithm in use. */
  importFor(hash: "SHA-1" | "SHA-256"): Promise<CryptoKey>;
}

/** The table. */
export const SP_KEY_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS saml_sp_keys (
    id uuid PRIMARY KEY,
    connection_id uuid NOT NULL,
    certificate text NOT NULL,
    private_key text NOT NULL,
    created_at timestamptz NOT NULL,
    seq bigserial NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS saml_sp_keys_connection ON saml_sp_keys (connection_id, seq)",
];

interface Row {
  id: string;
  connection_id: string;
  certificate: string;
  private_key: string;
  created_at: Date | string;
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

function fromRow(row: Row): SpKey {
  return {
    id: row.id,
    connectionId: row.connection_id,
    certificate: row.certificate,
    createdAt: new Date(row.created_at),
  };
}

/** A new RSA-2048 key pair and its self-signed certificate (SHA-256 with RSA), PKCS#8 and base64 DER. */
export async function generateSpKey(
  commonName: string,
  now: number,
  serial: Uint8Array,
): Promise<{ certificate: string; pkcs8: Uint8Array }> {
  const algorithm = {
    name: "RSASSA-PKCS1-v1_5",
    hash: "SHA-256",
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  };
  const keys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]) as CryptoKeyPair;
  const spki = await crypto.subtle.exportKey("spki", keys.publicKey);
  const name = new Name([
    new RelativeDistinguishedName([
      new AttributeTypeAndValue({ type: COMMON_NAME, value: new AttributeValue({ utf8String: commonName }) }),
    ]),
  ]);
  const signature = new AlgorithmIdentifier({ algorithm: SHA256_WITH_RSA, parameters: null });
  const positive = Uint8Array.from(serial, (b, i) => i === 0 ? (b & 0x7f) | 0x01 : b);
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: positive.buffer as ArrayBuffer,
    signature,
    issuer: name,
    validity: new Validity({
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + CERTIFICATE_LIFETIME_MS),
    }),
    subject: name,
    subjectPublicKeyInfo: AsnConvert.parse(spki, SubjectPublicKeyInfo),
  });
  const signatureValue = await crypto.subtle.sign(algorithm.name, keys.privateKey, AsnConvert.serialize(tbs));
  const der = new Uint8Array(
    AsnConvert.serialize(
      new Certificate({ tbsCertificate: tbs, signatureAlgorithm: signature, signatureValue }),
    ),
  );
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return { certificate: toBase64(der), pkcs8 };
}

/** A {@link DecryptionKey} over a PKCS#8 private key (copied). */
export function decryptionKey(id: string, pkcs8: Uint8Array): DecryptionKey {
  const der = pkcs8.slice() as Uint8Array<ArrayBuffer>;
  return {
    id,
    importFor: (hash) =>
      crypto.subtle.importKey("pkcs8", der, { name: "RSA-OAEP", hash }, false, ["decrypt"]),
  };
}

/** The keys table, on the plugin's connection or (with {@link SpKeyStore.in}) a transaction. */
export class SpKeyStore {
  readonly #ctx: PluginContext<unknown>;
  readonly #sql: PluginSql;
  readonly #crypto: SubjectCrypto;

  constructor(
    ctx: PluginContext<unknown>,
    storage: Pick<Storage, "pluginSql" | "subjectKeys"> = ctx.storage,
  ) {
    this.#ctx = ctx;
    this.#sql = storage.pluginSql;
    this.#crypto = new SubjectCrypto(storage.subjectKeys, ctx.random);
  }

  /** The same store on `tx` (an admin mutation's transaction-bound storage). */
  in(tx: Pick<Storage, "pluginSql" | "subjectKeys">): SpKeyStore {
    return new SpKeyStore(this.#ctx, tx);
  }

  /** A new key for the connection (its private half sealed). */
  async create(connectionId: string): Promise<SpKey> {
    const id = randomUuid(this.#ctx.random);
    const now = this.#ctx.clock.now();
    const { certificate, pkcs8 } = await generateSpKey(
      `svc SAML SP encryption ${connectionId}`,
      now,
      this.#ctx.random.bytes(16),
    );
    const sealed = toBase64(await this.#crypto.encrypt(id, pkcs8));
    pkcs8.fill(0);
    const [row] = await this.#sql.query<Row>(
      `INSERT INTO saml_sp_keys (id, connection_id, certificate, private_key, created_at)
       VALUES ($1, $2, $3, $4, $5) RETURNING id, connection_id, certificate, private_key, created_at`,
      [id, connectionId, certificate, sealed, new Date(now)],
    );
    return fromRow(row);
  }

  /** The connection's active keys, newest (current) first: creation order, `seq`. */
  async list(connectionId: string): Promise<SpKey[]> {
    const rows = await this.#sql.query<Row>(
      `SELECT id, connection_id, certificate, '' AS private_key, created_at FROM saml_sp_keys
       WHERE connection_id = $1 ORDER BY seq DESC`,
      [connectionId],
    );
    return rows.map(fromRow);
  }

  /** The connection's active keys able to decrypt, newest first (the private halves opened). */
  async decryptionKeys(connectionId: string): Promise<DecryptionKey[]> {
    const rows = await this.#sql.query<Row>(
      `SELECT id, connection_id, certificate, private_key, created_at FROM saml_sp_keys
       WHERE connection_id = $1 ORDER BY seq DESC LIMIT ${MAX_ACTIVE_KEYS}`,
      [connectionId],
    );
    const keys: DecryptionKey[] = [];
    for (const row of rows) {
      let pkcs8: Uint8Array;
      try {
        pkcs8 = await this.#crypto.decrypt(row.id, fromBase64(row.private_key));
      } catch {
        continue; // retired in between (its subject key destroyed)
      }
      keys.push(decryptionKey(row.id, pkcs8));
      pkcs8.fill(0);
    }
    return keys;
  }

  /** Retires a key: the row goes and its subject key is destroyed. False when there is none. */
  async retire(connectionId: string, keyId: string): Promise<boolean> {
    const rows = await this.#sql.query(
      "DELETE FROM saml_sp_keys WHERE id = $1 AND connection_id = $2 RETURNING id",
      [keyId, connectionId],
    );
    if (rows.length === 0) return false;
    await this.#crypto.destroy(keyId);
    return true;
  }

  /** Retires every key of a connection (it is being deleted). */
  async retireAll(connectionId: string): Promise<void> {
    const rows = await this.#sql.query<{ id: string }>(
      "DELETE FROM saml_sp_keys WHERE connection_id = $1 RETURNING id",
      [connectionId],
    );
    for (const row of rows) await this.#crypto.destroy(row.id);
  }
}
