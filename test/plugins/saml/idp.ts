/**
 * A SAML identity provider nobody here wrote: samlify's `IdentityProvider`, run in the test. It
 * signs (RSA-SHA256, exclusive c14n) the responses the tests post to svc's ACS; the response
 * template is samlify's own with an AuthnStatement and the user's attributes filled in (samlify
 * leaves both empty by default), and any value of the template may be overridden by a test.
 */
// @ts-types="./samlify.d.ts"
import * as samlify from "samlify";

// samlify defines SamlLib with a getter, which Deno's CommonJS analysis does not see as a named export.
const SamlLib = ((samlify as unknown as { default?: typeof samlify }).default ?? samlify).SamlLib;

samlify.setSchemaValidator({ validate: () => Promise.resolve("skipped: the test IdP only signs") });

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A fixture key pair: `idp`, `idp2`, `other` (a stranger's) or `soon` (expires within 30 days). */
export function fixture(name: "idp" | "idp2" | "other" | "soon"): { key: string; cert: string } {
  return {
    key: Deno.readTextFileSync(new URL(`${name}.key`, FIXTURES)),
    cert: Deno.readTextFileSync(new URL(`${name}.crt`, FIXTURES)),
  };
}

const POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
const REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";

/** What a response says (every field may be overridden). */
export interface ResponseOptions {
  /** The AuthnRequest id answered, or null (IdP-initiated). */
  readonly requestId: string | null;
  readonly nameId: string;
  readonly attributes?: Record<string, string>;
  /** Sign the assertion (default true). */
  readonly signAssertion?: boolean;
  /** Sign the Response (default false). */
  readonly signResponse?: boolean;
  /** The time the IdP believes it is (default: now). */
  readonly now?: number;
  /** Template values to override (Destination, Audience, SubjectRecipient, Issuer, …). */
  readonly values?: Record<string, string | null>;
  /** Encrypt the assertion (samlify's `xml-encryption`) to this SP certificate. */
  readonly encrypt?: EncryptOptions;
}

/** How samlify encrypts the assertion. */
export interface EncryptOptions {
  /** The SP's encryption certificate (PEM, or base64 DER as the SP metadata gives it). */
  readonly cert: string;
  /** The data algorithm (default `xmlenc11#aes256-gcm`). */
  readonly data?: string;
  /** The key transport algorithm (default `xmlenc#rsa-oaep-mgf1p`). */
  readonly key?: string;
  /** Sign the Response after encrypting (samlify's `encryptThenSign`; default false). */
  readonly encryptThenSign?: boolean;
}

/** The SP as the IdP knows it. */
export interface KnownSp {
  readonly entityId: string;
  readonly acsUrl: string;
}

export interface TestIdp {
  readonly entityId: string;
  readonly ssoUrl: string;
  /** The IdP's metadata (signing certificate, HTTP-Redirect SSO service). */
  metadata(): string;
  /** A signed response as XML text. */
  respond(sp: KnownSp, options: ResponseOptions): Promise<string>;
}

function escape(value: string): string {
  return value.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Builds a samlify IdP signing with `keys` (default the `idp` fixture), its time from `clock`. */
export function testIdp(
  entityId = "https://idp.acme.test/saml",
  keys: { key: string; cert: string } = fixture("idp"),
  ssoUrl = "https://idp.acme.test/sso",
  clock: () => number = Date.now,
): TestIdp {
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    privateKey: keys.key,
    signingCert: keys.cert,
    singleSignOnService: [{ Binding: REDIRECT, Location: ssoUrl }],
    singleLogoutService: [{ Binding: REDIRECT, Location: `${ssoUrl}/logout` }],
    nameIDFormat: [EMAIL_FORMAT],
  });
  const encryptingIdp = (encrypt: EncryptOptions) =>
    samlify.IdentityProvider({
      entityID: entityId,
      privateKey: keys.key,
      signingCert: keys.cert,
      singleSignOnService: [{ Binding: REDIRECT, Location: ssoUrl }],
      singleLogoutService: [{ Binding: REDIRECT, Location: `${ssoUrl}/logout` }],
      nameIDFormat: [EMAIL_FORMAT],
      isAssertionEncrypted: true,
      dataEncryptionAlgorithm: encrypt.data ?? "http://www.w3.org/2009/xmlenc11#aes256-gcm",
      keyEncryptionAlgorithm: encrypt.key ?? "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p",
    });
  return {
    entityId,
    ssoUrl,
    metadata: () => idp.getMetadata(),
    async respond(known, options) {
      const encryptCert = options.encrypt === undefined
        ? undefined
        : options.encrypt.cert.includes("BEGIN")
        ? options.encrypt.cert
        : `-----BEGIN CERTIFICATE-----\n${options.encrypt.cert}\n-----END CERTIFICATE-----\n`;
      const sp = samlify.ServiceProvider({
        entityID: known.entityId,
        assertionConsumerService: [{ Binding: POST, Location: known.acsUrl }],
        wantAssertionsSigned: options.signAssertion ?? true,
        wantMessageSigned: options.signResponse ?? false,
        ...(encryptCert === undefined ? {} : { encryptCert }),
      });
      const signer = options.encrypt === undefined ? idp : encryptingIdp(options.encrypt);
      const now = options.now ?? clock();
      const iso = (ms: number) => new Date(ms).toISOString();
      const attributes = Object.entries(options.attributes ?? {}).map(([name, value]) =>
        `<saml:Attribute Name="${
          escape(name)
        }" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"><saml:AttributeValue xsi:type="xs:string">${
          escape(value)
        }</saml:AttributeValue></saml:Attribute>`
      ).join("");
      const template = SamlLib.defaultLoginResponseTemplate.context
        .replace(
          "{AuthnStatement}",
          `<saml:AuthnStatement AuthnInstant="{IssueInstant}" SessionIndex="{AssertionID}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
        )
        .replace(
          "{AttributeStatement}",
          attributes === "" ? "" : `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`,
        );
      const id = `_${crypto.randomUUID()}`;
      const values: Record<string, string | null> = {
        ID: id,
        AssertionID: `_${crypto.randomUUID()}`,
        Destination: known.acsUrl,
        Audience: known.entityId,
        SubjectRecipient: known.acsUrl,
        Issuer: entityId,
        IssueInstant: iso(now),
        StatusCode: "urn:oasis:names:tc:SAML:2.0:status:Success",
        ConditionsNotBefore: iso(now - 1000),
        ConditionsNotOnOrAfter: iso(now + 5 * 60_000),
        SubjectConfirmationDataNotOnOrAfter: iso(now + 5 * 60_000),
        NameIDFormat: EMAIL_FORMAT,
        NameID: options.nameId,
        InResponseTo: options.requestId,
        ...options.values,
      };
      const { context } = await signer.createLoginResponse(sp, { extract: {} }, "post", {}, {
        customTagReplacement: () => ({ id, context: SamlLib.replaceTagsByValue(template, values) }),
        encryptThenSign: options.encrypt?.encryptThenSign ?? false,
      });
      return new TextDecoder().decode(Uint8Array.from(atob(context), (ch) => ch.charCodeAt(0)));
    },
  };
}
