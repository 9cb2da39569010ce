/**
 * SAML metadata: the IdP's (read when a connection is created or changed, pasted or fetched by
 * URL through the outbound guard) and the SP's own (served at each connection's metadata URL).
 *
 * From the IdP's metadata svc keeps its entity id, its HTTP-Redirect single sign-on URL and every
 * signing certificate (a `KeyDescriptor` with `use="signing"` or no `use`): several at once, so
 * that a rollover announced in the metadata is accepted on both sides of the switch. The
 * metadata's own signature is not checked: it comes from the organization's administrator
 * (pasted, or from a URL they name, which should be https).
 *
 * @module
 */
import { X509Certificate } from "node:crypto";
import { SvcError } from "../../mod.ts";
import { ADVERTISED_ALGORITHMS } from "./decrypt.ts";
import type { XmlElement } from "./dom.ts";
import { children, escapeXml, isElement, NS, onlyChild, parseXml, SamlXmlError, text } from "./xml.ts";

const REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
const POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
const MAX_CERTIFICATES = 10;

/** What svc keeps of an IdP's metadata. */
export interface IdpMetadata {
  readonly entityId: string;
  /** The HTTP-Redirect SingleSignOnService location (SP-initiated sign-in), or null. */
  readonly ssoUrl: string | null;
  /** Signing certificates, base64 DER. */
  readonly certificates: readonly string[];
}

/** A certificate as the API shows it. */
export interface CertificateInfo {
  readonly sha256: string;
  readonly subject: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** Metadata svc cannot use. Code `saml_metadata_invalid`. */
export class SamlMetadataError extends SvcError {
  constructor(readonly reason: string) {
    super("saml_metadata_invalid", `Invalid request: the IdP metadata cannot be used: ${reason}.`, 400);
    this.name = "SamlMetadataError";
  }
}

/** The PEM form of a base64 DER certificate. */
export function pem(base64: string): string {
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

/** Reads a certificate (base64 DER); throws {@link SamlMetadataError} when it is not one. */
export function certificateInfo(base64: string): CertificateInfo {
  try {
    const cert = new X509Certificate(pem(base64));
    return {
      sha256: cert.fingerprint256.replaceAll(":", "").toLowerCase(),
      subject: cert.subject.replaceAll("\n", ", ").slice(0, 200),
      notBefore: new Date(cert.validFrom),
      notAfter: new Date(cert.validTo),
    };
  } catch {
    throw new SamlMetadataError("a signing certificate is not an X.509 certificate");
  }
}

function url(value: string | null): string | null {
  if (value === null) return null;
  try {
    const parsed = new URL(value);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
  } catch {
    return null;
  }
}

/** Reads an IdP's metadata (an `EntityDescriptor`, or an `EntitiesDescriptor` holding one IdP). */
export function parseIdpMetadata(xml: string): IdpMetadata {
  let root: XmlElement;
  try {
    root = parseXml(xml);
  } catch (err) {
    if (err instanceof SamlXmlError) throw new SamlMetadataError(err.reason);
    throw err;
  }
  let entity = root;
  if (isElement(root, NS.metadata, "EntitiesDescriptor")) {
    const idps = children(root, NS.metadata, "EntityDescriptor")
      .filter((e) => children(e, NS.metadata, "IDPSSODescriptor").length > 0);
    if (idps.length !== 1) throw new SamlMetadataError("the metadata must describe exactly one IdP");
    entity = idps[0];
  }
  if (!isElement(entity, NS.metadata, "EntityDescriptor")) {
    throw new SamlMetadataError("not SAML metadata (EntityDescriptor)");
  }
  const entityId = entity.getAttribute("entityID") ?? "";
  if (entityId === "" || entityId.length > 1024) throw new SamlMetadataError("entityID missing or too long");
  const idp = onlyChild(entity, NS.metadata, "IDPSSODescriptor");
  if (idp === null) throw new SamlMetadataError("no IDPSSODescriptor");
  const certificates: string[] = [];
  for (const key of children(idp, NS.metadata, "KeyDescriptor")) {
    const use = key.getAttribute("use");
    if (use !== null && use !== "" && use !== "signing") continue;
    const info = onlyChild(key, NS.dsig, "KeyInfo");
    for (const data of info === null ? [] : children(info, NS.dsig, "X509Data")) {
      for (const cert of children(data, NS.dsig, "X509Certificate")) {
        const der = (text(cert) ?? "").replace(/\s+/g, "");
        if (!/^[A-Za-z0-9+/]+={0,2}$/.test(der)) throw new SamlMetadataError("a certificate is not base64");
        certificateInfo(der);
        if (!certificates.includes(der)) certificates.push(der);
      }
    }
  }
  if (certificates.length === 0) throw new SamlMetadataError("no signing certificate");
  if (certificates.length > MAX_CERTIFICATES) {
    throw new SamlMetadataError("more than 10 signing certificates");
  }
  const sso = children(idp, NS.metadata, "SingleSignOnService")
    .find((s) => s.getAttribute("Binding") === REDIRECT);
  return { entityId, ssoUrl: url(sso?.getAttribute("Location") ?? null), certificates };
}

/**
 * The SP's metadata for one connection: with `encryptionCertificates` (base64 DER, the current
 * first), one `KeyDescriptor use="encryption"` each, naming the algorithms svc decrypts.
 */
export function spMetadata(
  sp: { entityId: string; acsUrl: string; encryptionCertificates?: readonly string[] },
): string {
  const methods = ADVERTISED_ALGORITHMS.map((a) => `<md:EncryptionMethod Algorithm="${a}"/>`).join("");
  const keys = (sp.encryptionCertificates ?? []).map((der) =>
    `<md:KeyDescriptor use="encryption"><ds:KeyInfo xmlns:ds="${NS.dsig}"><ds:X509Data><ds:X509Certificate>${
      escapeXml(der)
    }</ds:X509Certificate></ds:X509Data></ds:KeyInfo>${methods}</md:KeyDescriptor>`
  ).join("");
  return `<?xml version="1.0" encoding="UTF-8"?>` +
    `<md:EntityDescriptor xmlns:md="${NS.metadata}" entityID="${escapeXml(sp.entityId)}">` +
    `<md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="${NS.protocol}">` +
    keys +
    `<md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>` +
    `<md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>` +
    `<md:AssertionConsumerService Binding="${POST}" Location="${
      escapeXml(sp.acsUrl)
    }" index="0" isDefault="true"/>` +
    `</md:SPSSODescriptor></md:EntityDescriptor>`;
}
