/**
 * A second encryptor for the tests, besides samlify's (`xml-encryption`, which knows only
 * `rsa-oaep-mgf1p` and `rsa-1_5`): it replaces the assertion of a (signed) response by an
 * `EncryptedAssertion` with XML Encryption 1.1's `rsa-oaep` (any digest and mask function),
 * AES-GCM or AES-CBC, and the `EncryptedKey` inside the data's `KeyInfo` or next to it behind a
 * `RetrievalMethod` (the shape Shibboleth and Entra ID send). Built with WebCrypto and
 * `node:crypto`; the XML is the tests' own text.
 */
import { constants, createCipheriv, publicEncrypt, X509Certificate } from "node:crypto";

const XENC = "http://www.w3.org/2001/04/xmlenc#";
const XENC11 = "http://www.w3.org/2009/xmlenc11#";
const DS = "http://www.w3.org/2000/09/xmldsig#";

/** How to encrypt. */
export interface HandEncryption {
  /** The SP certificate (PEM or base64 DER). */
  readonly cert: string;
  /** Key transport algorithm URI (default `xmlenc11#rsa-oaep`). */
  readonly keyAlgorithm?: string;
  /** OAEP digest URI (default SHA-256) and the hash node:crypto uses. */
  readonly digest?: { uri: string; hash: "sha1" | "sha256" } | null;
  /** MGF URI written (default `mgf1sha256`); null writes none. */
  readonly mgf?: string | null;
  /** Data algorithm URI (default `xmlenc11#aes256-gcm`). */
  readonly dataAlgorithm?: string;
  /** Put the EncryptedKey next to the EncryptedData, reached by a RetrievalMethod. */
  readonly detachedKey?: boolean;
}

function pemOf(cert: string): string {
  return cert.includes("BEGIN")
    ? cert
    : `-----BEGIN CERTIFICATE-----\n${cert.match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`;
}

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** Encrypts `plaintext` (an assertion's XML) into an `EncryptedAssertion` element's text. */
export function encryptedAssertion(plaintext: string, options: HandEncryption): string {
  const dataAlgorithm = options.dataAlgorithm ?? `${XENC11}aes256-gcm`;
  const keyBytes = /aes128/.test(dataAlgorithm) ? 16 : 32;
  const key = crypto.getRandomValues(new Uint8Array(keyBytes));
  const data = new TextEncoder().encode(plaintext);
  let cipher: Uint8Array;
  if (/gcm$/.test(dataAlgorithm)) {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const c = createCipheriv(keyBytes === 16 ? "aes-128-gcm" : "aes-256-gcm", key, iv);
    const body = new Uint8Array([...c.update(data), ...c.final()]);
    cipher = new Uint8Array([...iv, ...body, ...c.getAuthTag()]);
  } else {
    const iv = crypto.getRandomValues(new Uint8Array(16));
    const c = createCipheriv(
      keyBytes === 16 ? "aes-128-cbc" : /tripledes/.test(dataAlgorithm) ? "des-ede3-cbc" : "aes-256-cbc",
      key,
      iv,
    );
    cipher = new Uint8Array([...iv, ...c.update(data), ...c.final()]);
  }
  const publicKey = new X509Certificate(pemOf(options.cert)).publicKey;
  const digest = options.digest === undefined
    ? { uri: `${XENC}sha256`, hash: "sha256" as const }
    : options.digest;
  const wrapped = publicEncrypt(
    { key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: digest?.hash ?? "sha1" },
    key,
  );
  const mgf = options.mgf === undefined ? `${XENC11}mgf1sha256` : options.mgf;
  const keyAlgorithm = options.keyAlgorithm ?? `${XENC11}rsa-oaep`;
  const encryptedKey = (id: string) =>
    `<xenc:EncryptedKey xmlns:xenc="${XENC}"${id}><xenc:EncryptionMethod Algorithm="${keyAlgorithm}">${
      digest === null ? "" : `<ds:DigestMethod xmlns:ds="${DS}" Algorithm="${digest.uri}"/>`
    }${
      mgf === null ? "" : `<xenc11:MGF xmlns:xenc11="${XENC11}" Algorithm="${mgf}"/>`
    }</xenc:EncryptionMethod><xenc:CipherData><xenc:CipherValue>${
      b64(new Uint8Array(wrapped))
    }</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey>`;
  const keyInfo = options.detachedKey
    ? `<ds:KeyInfo xmlns:ds="${DS}"><ds:RetrievalMethod Type="${XENC}EncryptedKey" URI="#_ek1"/></ds:KeyInfo>`
    : `<ds:KeyInfo xmlns:ds="${DS}">${encryptedKey("")}</ds:KeyInfo>`;
  return `<saml:EncryptedAssertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"><xenc:EncryptedData xmlns:xenc="${XENC}" Type="${XENC}Element"><xenc:EncryptionMethod Algorithm="${dataAlgorithm}"/>${keyInfo}<xenc:CipherData><xenc:CipherValue>${
    b64(cipher)
  }</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>${
    options.detachedKey ? encryptedKey(' Id="_ek1"') : ""
  }</saml:EncryptedAssertion>`;
}
