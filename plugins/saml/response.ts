/**
 * Validation of a SAML `Response` (Web Browser SSO profile, HTTP-POST binding) for one
 * connection. What is accepted is exactly what a verified signature covers:
 *
 * - the document is parsed with no DTD (see `xml.ts`); its root is one `samlp:Response` holding
 *   exactly one `saml:Assertion` or one `saml:EncryptedAssertion`, as its own child (no other
 *   assertion anywhere, encrypted or not); a connection that requires encryption refuses a plain
 *   one;
 * - signatures may sit only as the direct child of the Response or of the Assertion (one each at
 *   most) and must reference their parent by its `ID`, which no other element of the document
 *   carries (one `Reference`, exclusive c14n and enveloped-signature transforms only, RSA-SHA256
 *   or RSA-SHA512, SHA-256 or SHA-512 digests);
 * - each signature present is verified with the connection's certificates only (`xml-crypto`
 *   with `getCertFromKeyInfo` disabled: a key in the message is never used); one that fails
 *   refuses the document, and at least one must be present;
 * - the assertion is read from the canonical bytes the verified signature covers
 *   (`getSignedReferences`), parsed again: the assertion's own signature's bytes, else the
 *   Response's (which must hold the one assertion). Nothing is read from the received DOM that a
 *   signature did not cover, except the envelope of an assertion-only signature (Destination,
 *   InResponseTo, Status), which is checked but never trusted for identity. This defeats the
 *   signature-wrapping attacks (XSW 1–8): a wrapper either adds an assertion or an ID (refused by
 *   shape) or moves the signed one (the data still comes from the signed bytes);
 * - an encrypted assertion is decrypted with the connection's own SP keys (`decrypt.ts`) from
 *   the verified bytes of the Response's signature when it has one (the signature covers the
 *   `EncryptedAssertion`), else from the received document; the plaintext is parsed as above and
 *   must be one `saml:Assertion` with no assertion inside it and a signature only as its own
 *   child. Then exactly the checks of a plain assertion: its own signature, when present, is
 *   verified over the decrypted text and the assertion read from its verified bytes; without one,
 *   the Response's signature must have covered the ciphertext (anyone can encrypt to the SP's
 *   public certificate, so an unsigned Response's encrypted assertion must carry a signature);
 * - then the profile's rules: Status Success, Destination and bearer `Recipient` equal the ACS
 *   URL, `Audience` the SP's entity id, `Issuer` the IdP's entity id, `InResponseTo` the request
 *   this browser started (absent for an IdP-initiated response), `NotBefore`/`NotOnOrAfter` with
 *   bounded skew against the injected clock, a lifetime of at most a day.
 *
 * Every refusal is a {@link SamlRefusedError} whose `reason` is recorded, never shown.
 *
 * @module
 */
// @ts-types="./xml-crypto.d.ts"
import { SignedXml } from "xml-crypto";
import { SvcError } from "../../mod.ts";
import { decryptAssertion, DecryptionRefused } from "./decrypt.ts";
import type { XmlElement } from "./dom.ts";
import type { DecryptionKey } from "./sp-keys.ts";
import {
  children,
  descendants,
  elementsWithId,
  isElement,
  NS,
  onlyChild,
  parseXml,
  SamlXmlError,
  text,
} from "./xml.ts";

/** A refused response: `reason` goes to `saml.refused`, the browser sees one neutral page. */
export class SamlRefusedError extends SvcError {
  constructor(readonly reason: string) {
    super("saml_refused", "Signing in through your organization did not work.", 403);
    this.name = "SamlRefusedError";
  }
}

/** What the response must match. */
export interface ResponseExpectations {
  /** The SP's entity id (the `Audience`). */
  readonly spEntityId: string;
  /** The ACS URL (`Destination` and the bearer `Recipient`). */
  readonly acsUrl: string;
  /** The IdP's entity id (the `Issuer`). */
  readonly idpEntityId: string;
  /** The IdP's signing certificates (PEM); any of them may sign. */
  readonly certificates: readonly string[];
  /** The id of the AuthnRequest this browser sent, or null for an IdP-initiated response. */
  readonly requestId: string | null;
  /** The current time, milliseconds since the epoch. */
  readonly now: number;
  /** Allowed clock skew in milliseconds. */
  readonly skewMs: number;
  /** The connection's SP keys able to decrypt (read only for an encrypted assertion); none by default. */
  readonly decryptionKeys?: () => Promise<readonly DecryptionKey[]>;
  /** Refuse a plain (unencrypted) assertion (default false). */
  readonly requireEncrypted?: boolean;
}

/** What a valid response says. */
export interface ValidatedAssertion {
  readonly assertionId: string;
  readonly issuer: string;
  readonly nameId: string;
  readonly nameIdFormat: string | null;
  readonly sessionIndex: string | null;
  /** Attribute name → values. */
  readonly attributes: Readonly<Record<string, readonly string[]>>;
  /** Until when the assertion id must stay consumed (its latest NotOnOrAfter plus skew). */
  readonly consumeUntil: Date;
  /** Whether the assertion came encrypted. */
  readonly encrypted: boolean;
}

const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";
const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";
const SIGNATURE_ALGORITHMS = new Set([
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
]);
const DIGEST_ALGORITHMS = new Set([
  "http://www.w3.org/2001/04/xmlenc#sha256",
  "http://www.w3.org/2001/04/xmlenc#sha512",
]);
const C14N = "http://www.w3.org/2001/10/xml-exc-c14n#";
const TRANSFORMS = new Set(["http://www.w3.org/2000/09/xmldsig#enveloped-signature", C14N]);
const MAX_LIFETIME_MS = 24 * 3600_000;
const MAX_ATTRIBUTES = 100;
const MAX_VALUES = 20;
const MAX_VALUE_CHARS = 1024;

function attr(el: XmlElement, name: string): string | null {
  return el.hasAttribute(name) ? el.getAttribute(name) : null;
}

function time(el: XmlElement, name: string): number | null {
  const value = attr(el, name);
  if (value === null) return null;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/.test(value)) {
    throw new SamlRefusedError(`${name} is not a UTC time`);
  }
  const ms = Date.parse(value.replace(/(\.\d{3})\d+Z$/, "$1Z"));
  if (Number.isNaN(ms)) throw new SamlRefusedError(`${name} is not a UTC time`);
  return ms;
}

/** Checks the algorithms and the one reference of a signature; answers the referenced id. */
function checkSignatureShape(signature: XmlElement, parentId: string): void {
  const signedInfo = onlyChild(signature, NS.dsig, "SignedInfo");
  if (signedInfo === null) throw new SamlRefusedError("signature without SignedInfo");
  const c14n = onlyChild(signedInfo, NS.dsig, "CanonicalizationMethod");
  if (c14n === null || attr(c14n, "Algorithm") !== C14N) {
    throw new SamlRefusedError("signature canonicalization not exclusive c14n");
  }
  const method = onlyChild(signedInfo, NS.dsig, "SignatureMethod");
  if (method === null || !SIGNATURE_ALGORITHMS.has(attr(method, "Algorithm") ?? "")) {
    throw new SamlRefusedError("signature algorithm not allowed");
  }
  const references = children(signedInfo, NS.dsig, "Reference");
  if (references.length !== 1) throw new SamlRefusedError("signature must have exactly one reference");
  const [reference] = references;
  if (attr(reference, "URI") !== `#${parentId}`) {
    throw new SamlRefusedError("signature does not reference its parent");
  }
  const digest = onlyChild(reference, NS.dsig, "DigestMethod");
  if (digest === null || !DIGEST_ALGORITHMS.has(attr(digest, "Algorithm") ?? "")) {
    throw new SamlRefusedError("digest algorithm not allowed");
  }
  const transforms = onlyChild(reference, NS.dsig, "Transforms");
  for (const transform of transforms === null ? [] : children(transforms, NS.dsig, "Transform")) {
    if (!TRANSFORMS.has(attr(transform, "Algorithm") ?? "")) {
      throw new SamlRefusedError("transform not allowed");
    }
  }
}

/**
 * Verifies `signature` (a child of `parent`) over `xml` with one of `certificates`; answers the
 * canonical bytes of `parent` it covers. Throws when no certificate verifies it.
 */
function verifiedBytes(
  xml: string,
  root: XmlElement,
  signature: XmlElement,
  parent: XmlElement,
  certificates: readonly string[],
): string {
  const id = attr(parent, "ID");
  if (id === null || id === "") throw new SamlRefusedError("signed element without ID");
  if (elementsWithId(root, id).length !== 1) throw new SamlRefusedError("ID not unique in document");
  checkSignatureShape(signature, id);
  for (const certificate of certificates) {
    const signed = new SignedXml({
      publicCert: certificate,
      // Never a key from the message: only the connection's certificates.
      getCertFromKeyInfo: () => null,
    });
    let ok = false;
    try {
      signed.loadSignature(signature);
      ok = signed.checkSignature(xml);
    } catch {
      ok = false;
    }
    if (!ok) continue;
    const references = signed.getReferences();
    const bytes = signed.getSignedReferences();
    if (references.length !== 1 || references[0].uri !== `#${id}` || bytes.length !== 1) {
      throw new SamlRefusedError("signature references other than its parent");
    }
    return bytes[0];
  }
  throw new SamlRefusedError("signature invalid or not by the connection's certificates");
}

function readAttributes(assertion: XmlElement): Record<string, string[]> {
  const attributes: Record<string, string[]> = {};
  let count = 0;
  for (const statement of children(assertion, NS.assertion, "AttributeStatement")) {
    for (const attribute of children(statement, NS.assertion, "Attribute")) {
      const name = attr(attribute, "Name");
      if (name === null || name === "" || name.length > 256) continue;
      if (++count > MAX_ATTRIBUTES) throw new SamlRefusedError("too many attributes");
      const values = children(attribute, NS.assertion, "AttributeValue").map((v) => text(v) ?? "");
      if (values.length > MAX_VALUES || values.some((v) => v.length > MAX_VALUE_CHARS)) {
        throw new SamlRefusedError("attribute too large");
      }
      attributes[name] = [...(attributes[name] ?? []), ...values];
    }
  }
  return attributes;
}

function parseOrRefuse(xml: string): XmlElement {
  try {
    return parseXml(xml);
  } catch (err) {
    if (err instanceof SamlXmlError) throw new SamlRefusedError(err.reason);
    throw err;
  }
}

/** Decrypts `encrypted` and checks the plaintext's shape: one Assertion, nothing nested. */
async function decrypted(
  encrypted: XmlElement,
  expect: ResponseExpectations,
): Promise<{ xml: string; root: XmlElement }> {
  let xml: string;
  try {
    xml = await decryptAssertion(
      encrypted,
      expect.decryptionKeys === undefined ? [] : await expect.decryptionKeys(),
    );
  } catch (err) {
    if (err instanceof DecryptionRefused) throw new SamlRefusedError(`decryption: ${err.reason}`);
    throw err;
  }
  const root = parseOrRefuse(xml);
  if (!isElement(root, NS.assertion, "Assertion")) {
    throw new SamlRefusedError("decrypted data not an Assertion");
  }
  if (
    descendants(root, NS.assertion, "Assertion").length !== 1 ||
    descendants(root, NS.assertion, "EncryptedAssertion").length !== 0
  ) {
    throw new SamlRefusedError("decrypted assertion holds another assertion");
  }
  for (const signature of descendants(root, NS.dsig, "Signature")) {
    if (signature.parentNode !== root) throw new SamlRefusedError("signature in an unexpected place");
  }
  return { xml, root };
}

/**
 * Validates a decoded `SAMLResponse` (XML text) against `expect`; see the module doc. Every
 * refusal, a shape the XML helpers refuse (two signatures on one element…) included, is a
 * {@link SamlRefusedError}.
 */
export async function validateResponse(
  xml: string,
  expect: ResponseExpectations,
): Promise<ValidatedAssertion> {
  try {
    return await validate(xml, expect);
  } catch (err) {
    if (err instanceof SamlXmlError) throw new SamlRefusedError(err.reason);
    throw err;
  }
}

async function validate(xml: string, expect: ResponseExpectations): Promise<ValidatedAssertion> {
  const root = parseOrRefuse(xml);
  if (!isElement(root, NS.protocol, "Response")) throw new SamlRefusedError("not a Response");
  const plain = descendants(root, NS.assertion, "Assertion");
  const encryptedAssertions = descendants(root, NS.assertion, "EncryptedAssertion");
  if (plain.length + encryptedAssertions.length !== 1) {
    throw new SamlRefusedError(`${plain.length} assertions, ${encryptedAssertions.length} encrypted`);
  }
  const encrypted = encryptedAssertions.length === 1;
  if (!encrypted && expect.requireEncrypted === true) throw new SamlRefusedError("assertion not encrypted");
  const [received] = encrypted ? encryptedAssertions : plain;
  if (received.parentNode !== root) throw new SamlRefusedError("assertion not a child of the Response");
  for (const signature of descendants(root, NS.dsig, "Signature")) {
    if (signature.parentNode !== root && (encrypted || signature.parentNode !== received)) {
      throw new SamlRefusedError("signature in an unexpected place");
    }
  }
  const responseSignature = onlyChild(root, NS.dsig, "Signature");
  const receivedSignature = encrypted ? null : onlyChild(received, NS.dsig, "Signature");
  if (!encrypted && responseSignature === null && receivedSignature === null) {
    throw new SamlRefusedError("unsigned");
  }
  if (expect.certificates.length === 0) throw new SamlRefusedError("connection has no certificate");

  let response = root;
  let assertion: XmlElement | null = null;
  let signedEncrypted: XmlElement | null = null;
  if (responseSignature !== null) {
    const bytes = verifiedBytes(xml, root, responseSignature, root, expect.certificates);
    response = parseXml(bytes);
    if (!isElement(response, NS.protocol, "Response")) {
      throw new SamlRefusedError("signed bytes not a Response");
    }
    const signedAssertions = descendants(
      response,
      NS.assertion,
      encrypted ? "EncryptedAssertion" : "Assertion",
    );
    const others = descendants(response, NS.assertion, encrypted ? "Assertion" : "EncryptedAssertion");
    if (signedAssertions.length !== 1 || signedAssertions[0].parentNode !== response || others.length !== 0) {
      throw new SamlRefusedError("signed Response does not hold exactly one assertion");
    }
    if (encrypted) signedEncrypted = signedAssertions[0];
    else assertion = signedAssertions[0];
  }
  let receivedId = attr(received, "ID");
  if (encrypted) {
    // From the signed bytes when the Response is signed: the ciphertext the IdP signed.
    const clear = await decrypted(signedEncrypted ?? received, expect);
    receivedId = attr(clear.root, "ID");
    const ownSignature = onlyChild(clear.root, NS.dsig, "Signature");
    if (ownSignature !== null) {
      const bytes = verifiedBytes(clear.xml, clear.root, ownSignature, clear.root, expect.certificates);
      assertion = parseXml(bytes);
      if (!isElement(assertion, NS.assertion, "Assertion")) {
        throw new SamlRefusedError("signed bytes not an Assertion");
      }
    } else if (signedEncrypted !== null) {
      assertion = clear.root;
    } else {
      throw new SamlRefusedError("unsigned");
    }
  } else if (receivedSignature !== null) {
    const bytes = verifiedBytes(xml, root, receivedSignature, received, expect.certificates);
    assertion = parseXml(bytes);
    if (!isElement(assertion, NS.assertion, "Assertion")) {
      throw new SamlRefusedError("signed bytes not an Assertion");
    }
  }
  if (assertion === null) throw new SamlRefusedError("unsigned");
  if (attr(assertion, "ID") !== receivedId) {
    throw new SamlRefusedError("signed assertion is not the received one");
  }

  const { now, skewMs } = expect;
  // The envelope.
  if (attr(response, "Version") !== "2.0") throw new SamlRefusedError("Response version not 2.0");
  if (attr(response, "Destination") !== expect.acsUrl) throw new SamlRefusedError("destination mismatch");
  const statusCode = onlyChild(
    onlyChild(response, NS.protocol, "Status") ?? response,
    NS.protocol,
    "StatusCode",
  );
  if (statusCode === null || attr(statusCode, "Value") !== SUCCESS) {
    throw new SamlRefusedError("status not success");
  }
  const responseIssuer = onlyChild(response, NS.assertion, "Issuer");
  if (responseIssuer !== null && text(responseIssuer) !== expect.idpEntityId) {
    throw new SamlRefusedError("response issuer mismatch");
  }
  const inResponseTo = attr(response, "InResponseTo");
  if (expect.requestId === null ? inResponseTo !== null : inResponseTo !== expect.requestId) {
    throw new SamlRefusedError("in_response_to mismatch");
  }

  // The assertion, from the verified bytes.
  const assertionId = attr(assertion, "ID") ?? "";
  if (!/^[A-Za-z_][\w.-]{0,255}$/.test(assertionId)) throw new SamlRefusedError("assertion id malformed");
  if (attr(assertion, "Version") !== "2.0") throw new SamlRefusedError("assertion version not 2.0");
  if (text(onlyChild(assertion, NS.assertion, "Issuer")) !== expect.idpEntityId) {
    throw new SamlRefusedError("issuer mismatch");
  }
  const subject = onlyChild(assertion, NS.assertion, "Subject");
  const nameIdElement = subject === null ? null : onlyChild(subject, NS.assertion, "NameID");
  const nameId = text(nameIdElement);
  if (nameIdElement === null || nameId === null || nameId === "" || nameId.length > 256) {
    throw new SamlRefusedError("no usable NameID");
  }
  // Bearer subject confirmation: one must hold.
  let confirmedUntil: number | null = null;
  let firstProblem: string | null = null;
  for (const confirmation of children(subject!, NS.assertion, "SubjectConfirmation")) {
    if (attr(confirmation, "Method") !== BEARER) continue;
    const data = onlyChild(confirmation, NS.assertion, "SubjectConfirmationData");
    const problem = (() => {
      if (data === null) return "bearer confirmation without data";
      if (attr(data, "Recipient") !== expect.acsUrl) return "recipient mismatch";
      const notOnOrAfter = time(data, "NotOnOrAfter");
      if (notOnOrAfter === null) return "bearer confirmation without NotOnOrAfter";
      if (now >= notOnOrAfter + skewMs) return "subject confirmation expired";
      const notBefore = time(data, "NotBefore");
      if (notBefore !== null) return "bearer confirmation with NotBefore";
      const replyTo = attr(data, "InResponseTo");
      if (expect.requestId === null ? replyTo !== null : replyTo !== expect.requestId) {
        return "in_response_to mismatch";
      }
      confirmedUntil = Math.max(confirmedUntil ?? 0, notOnOrAfter);
      return null;
    })();
    if (problem !== null) firstProblem ??= problem;
  }
  if (confirmedUntil === null) throw new SamlRefusedError(firstProblem ?? "no bearer subject confirmation");

  const conditions = onlyChild(assertion, NS.assertion, "Conditions");
  if (conditions === null) throw new SamlRefusedError("no conditions");
  const notBefore = time(conditions, "NotBefore");
  const notOnOrAfter = time(conditions, "NotOnOrAfter");
  if (notBefore !== null && now + skewMs < notBefore) throw new SamlRefusedError("not yet valid");
  if (notOnOrAfter !== null && now >= notOnOrAfter + skewMs) throw new SamlRefusedError("expired");
  const restrictions = children(conditions, NS.assertion, "AudienceRestriction");
  if (restrictions.length === 0) throw new SamlRefusedError("no audience restriction");
  for (const restriction of restrictions) {
    const audiences = children(restriction, NS.assertion, "Audience").map((a) => text(a));
    if (!audiences.includes(expect.spEntityId)) throw new SamlRefusedError("audience mismatch");
  }
  const authn = children(assertion, NS.assertion, "AuthnStatement");
  if (authn.length === 0) throw new SamlRefusedError("no authn statement");
  const sessionNotOnOrAfter = time(authn[0], "SessionNotOnOrAfter");
  if (sessionNotOnOrAfter !== null && now >= sessionNotOnOrAfter + skewMs) {
    throw new SamlRefusedError("idp session expired");
  }
  const latest = Math.max(confirmedUntil, notOnOrAfter ?? 0);
  if (latest - now > MAX_LIFETIME_MS) throw new SamlRefusedError("validity longer than a day");

  return {
    assertionId,
    issuer: expect.idpEntityId,
    nameId,
    nameIdFormat: attr(nameIdElement, "Format"),
    sessionIndex: attr(authn[0], "SessionIndex"),
    attributes: readAttributes(assertion),
    consumeUntil: new Date(latest + skewMs),
    encrypted,
  };
}
