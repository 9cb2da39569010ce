/**
 * Decryption of a `saml:EncryptedAssertion` (XML Encryption 1.1) with the connection's own SP
 * keys. The elements are read with `@xmldom/xmldom` through `xml.ts` (never by hand); the
 * cryptography is WebCrypto (RSA-OAEP, AES-GCM) and `node:crypto` (AES-CBC, whose XML Encryption
 * padding WebCrypto does not accept).
 *
 * `@authenio/xml-encryption` (samlify's) is not used: it knows no `xmlenc11#rsa-oaep` with
 * SHA-256, and it takes the document's first `KeyInfo` and `EncryptedData` wherever they sit.
 *
 * Allowed, anything else refused with a stable reason:
 * - key transport: `xmlenc#rsa-oaep-mgf1p` (SHA-1), `xmlenc11#rsa-oaep` with SHA-1 and MGF1-SHA1
 *   or SHA-256 and MGF1-SHA256 (digest and mask hash equal: WebCrypto's OAEP), no OAEP label;
 * - data: `xmlenc11#aes128-gcm`, `xmlenc11#aes256-gcm`, `xmlenc#aes128-cbc`, `xmlenc#aes256-cbc`.
 *
 * Shape: the `EncryptedAssertion` holds one `EncryptedData` (type Element, if typed) and at most
 * {@link MAX_ENCRYPTED_KEYS} `EncryptedKey`s, inside its `KeyInfo` or next to it (reached by a
 * `RetrievalMethod`). Cost is bounded: at most that many keys times the connection's active SP
 * keys RSA decryptions, one symmetric decryption of a ciphertext no larger than the document.
 *
 * @module
 */
import { createDecipheriv } from "node:crypto";
import type { XmlElement } from "./dom.ts";
import type { DecryptionKey } from "./sp-keys.ts";
import { children, descendants, NS, onlyChild, SamlXmlError, text } from "./xml.ts";

/** Why a decryption was refused (recorded in `saml.refused`). */
export class DecryptionRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "DecryptionRefused";
  }
}

const XENC11 = "http://www.w3.org/2009/xmlenc11#";
const RSA_OAEP_MGF1P = `${NS.xenc}rsa-oaep-mgf1p`;
const RSA_OAEP = `${XENC11}rsa-oaep`;
const SHA1 = "http://www.w3.org/2000/09/xmldsig#sha1";
const SHA256 = `${NS.xenc}sha256`;
const MGF1_SHA1 = `${XENC11}mgf1sha1`;
const MGF1_SHA256 = `${XENC11}mgf1sha256`;
const ELEMENT_TYPE = `${NS.xenc}Element`;

/** The data algorithms svc decrypts: key length, kind. */
const DATA_ALGORITHMS: Record<string, { keyBytes: number; mode: "gcm" | "cbc" }> = {
  [`${XENC11}aes128-gcm`]: { keyBytes: 16, mode: "gcm" },
  [`${XENC11}aes256-gcm`]: { keyBytes: 32, mode: "gcm" },
  [`${NS.xenc}aes128-cbc`]: { keyBytes: 16, mode: "cbc" },
  [`${NS.xenc}aes256-cbc`]: { keyBytes: 32, mode: "cbc" },
};

/** The most `EncryptedKey`s read (IdPs send one per recipient). */
export const MAX_ENCRYPTED_KEYS = 4;

/** The algorithms svc accepts, as the SP metadata advertises them (preferred first). */
export const ADVERTISED_ALGORITHMS: readonly string[] = [
  `${XENC11}aes256-gcm`,
  `${XENC11}aes128-gcm`,
  `${NS.xenc}aes256-cbc`,
  `${NS.xenc}aes128-cbc`,
  RSA_OAEP_MGF1P,
  RSA_OAEP,
];

function algorithm(el: XmlElement | null): string | null {
  return el === null ? null : el.getAttribute("Algorithm");
}

function base64(el: XmlElement | null, what: string): Uint8Array {
  const value = (text(el) ?? "").replace(/\s+/g, "");
  if (value === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) {
    throw new DecryptionRefused(`${what} not base64`);
  }
  try {
    return Uint8Array.from(atob(value), (ch) => ch.charCodeAt(0));
  } catch {
    throw new DecryptionRefused(`${what} not base64`);
  }
}

/** The OAEP hash of an `EncryptedKey`'s method, or a refusal. */
function oaepHash(method: XmlElement | null): "SHA-1" | "SHA-256" {
  const name = algorithm(method);
  if (method === null || (name !== RSA_OAEP_MGF1P && name !== RSA_OAEP)) {
    throw new DecryptionRefused("key transport algorithm not allowed");
  }
  if (onlyChild(method, NS.xenc, "OAEPparams") !== null) {
    throw new DecryptionRefused("OAEP label not supported");
  }
  const digest = algorithm(onlyChild(method, NS.dsig, "DigestMethod")) ?? SHA1;
  const mgf = name === RSA_OAEP ? algorithm(onlyChild(method, XENC11, "MGF")) ?? MGF1_SHA1 : MGF1_SHA1;
  if (digest === SHA1 && mgf === MGF1_SHA1) return "SHA-1";
  if (digest === SHA256 && mgf === MGF1_SHA256) return "SHA-256";
  throw new DecryptionRefused("key transport digest or mask function not allowed");
}

/** The `EncryptedKey`s the data's `KeyInfo` holds or points to (next to the data). */
function encryptedKeys(encryptedAssertion: XmlElement, data: XmlElement): XmlElement[] {
  const keyInfo = onlyChild(data, NS.dsig, "KeyInfo");
  const found = keyInfo === null ? [] : children(keyInfo, NS.xenc, "EncryptedKey");
  const siblings = children(encryptedAssertion, NS.xenc, "EncryptedKey");
  if (found.length === 0 && keyInfo !== null) {
    for (const retrieval of children(keyInfo, NS.dsig, "RetrievalMethod")) {
      const uri = retrieval.getAttribute("URI") ?? "";
      if (!uri.startsWith("#")) throw new DecryptionRefused("key retrieval outside the assertion");
      const target = siblings.find((key) => key.getAttribute("Id") === uri.slice(1));
      if (target === undefined) throw new DecryptionRefused("retrieved key not found");
      found.push(target);
    }
  }
  if (found.length === 0) found.push(...siblings);
  if (found.length === 0) throw new DecryptionRefused("no encrypted key");
  if (found.length > MAX_ENCRYPTED_KEYS) throw new DecryptionRefused("too many encrypted keys");
  return found;
}

async function unwrap(
  encryptedKey: XmlElement,
  keys: readonly DecryptionKey[],
  keyBytes: number,
): Promise<Uint8Array | null> {
  const hash = oaepHash(onlyChild(encryptedKey, NS.xenc, "EncryptionMethod"));
  const cipherData = onlyChild(encryptedKey, NS.xenc, "CipherData");
  const wrapped = base64(cipherData === null ? null : onlyChild(cipherData, NS.xenc, "CipherValue"), "key");
  if (wrapped.length > 1024) throw new DecryptionRefused("encrypted key too large");
  for (const key of keys) {
    try {
      const raw = new Uint8Array(
        await crypto.subtle.decrypt(
          { name: "RSA-OAEP" },
          await key.importFor(hash),
          wrapped as Uint8Array<ArrayBuffer>,
        ),
      );
      if (raw.length === keyBytes) return raw;
    } catch {
      // Not this key.
    }
  }
  return null;
}

async function decryptData(mode: "gcm" | "cbc", key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  if (mode === "gcm") {
    if (data.length < 12 + 16) throw new DecryptionRefused("ciphertext too short");
    const aes = await crypto.subtle.importKey("raw", key as Uint8Array<ArrayBuffer>, "AES-GCM", false, [
      "decrypt",
    ]);
    try {
      return new Uint8Array(
        await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: data.slice(0, 12), tagLength: 128 },
          aes,
          data.slice(12),
        ),
      );
    } catch {
      throw new DecryptionRefused("ciphertext does not decrypt");
    }
  }
  if (data.length < 32 || data.length % 16 !== 0) throw new DecryptionRefused("ciphertext malformed");
  let plain: Uint8Array;
  try {
    const decipher = createDecipheriv(
      key.length === 16 ? "aes-128-cbc" : "aes-256-cbc",
      key,
      data.subarray(0, 16),
    );
    decipher.setAutoPadding(false);
    const head = decipher.update(data.subarray(16));
    const tail = decipher.final();
    plain = new Uint8Array(head.length + tail.length);
    plain.set(head);
    plain.set(tail, head.length);
  } catch {
    throw new DecryptionRefused("ciphertext does not decrypt");
  }
  // XML Encryption padding: the last byte says how many bytes to drop (1 to 16).
  const pad = plain[plain.length - 1];
  if (pad < 1 || pad > 16) throw new DecryptionRefused("ciphertext does not decrypt");
  return plain.subarray(0, plain.length - pad);
}

/**
 * Decrypts `encryptedAssertion` with one of `keys`; answers the plaintext (the assertion's XML
 * text, parsed and checked by the caller). Throws {@link DecryptionRefused}.
 */
export async function decryptAssertion(
  encryptedAssertion: XmlElement,
  keys: readonly DecryptionKey[],
): Promise<string> {
  try {
    if (keys.length === 0) {
      throw new DecryptionRefused("encrypted assertion but the connection has no SP key");
    }
    const data = onlyChild(encryptedAssertion, NS.xenc, "EncryptedData");
    if (data === null) throw new DecryptionRefused("no EncryptedData");
    const type = data.getAttribute("Type");
    if (type !== null && type !== "" && type !== ELEMENT_TYPE) {
      throw new DecryptionRefused("encrypted data not an element");
    }
    // Nothing else may hide in the encrypted assertion (no second EncryptedData nested anywhere).
    if (descendants(encryptedAssertion, NS.xenc, "EncryptedData").length !== 1) {
      throw new DecryptionRefused("more than one EncryptedData");
    }
    const dataAlgorithm = DATA_ALGORITHMS[algorithm(onlyChild(data, NS.xenc, "EncryptionMethod")) ?? ""];
    if (dataAlgorithm === undefined) throw new DecryptionRefused("data encryption algorithm not allowed");
    const cipherData = onlyChild(data, NS.xenc, "CipherData");
    if (cipherData !== null && onlyChild(cipherData, NS.xenc, "CipherReference") !== null) {
      throw new DecryptionRefused("cipher reference not allowed");
    }
    const ciphertext = base64(
      cipherData === null ? null : onlyChild(cipherData, NS.xenc, "CipherValue"),
      "data",
    );
    let symmetric: Uint8Array | null = null;
    for (const encryptedKey of encryptedKeys(encryptedAssertion, data)) {
      symmetric = await unwrap(encryptedKey, keys, dataAlgorithm.keyBytes);
      if (symmetric !== null) break;
    }
    if (symmetric === null) throw new DecryptionRefused("no SP key decrypts the assertion");
    const plain = await decryptData(dataAlgorithm.mode, symmetric, ciphertext);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(plain);
    } catch {
      throw new DecryptionRefused("decrypted assertion not UTF-8");
    }
  } catch (err) {
    if (err instanceof SamlXmlError) throw new DecryptionRefused(err.reason);
    throw err;
  }
}
