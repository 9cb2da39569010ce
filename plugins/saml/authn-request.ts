/**
 * The AuthnRequest of SP-initiated sign-in, sent with the HTTP-Redirect binding: the XML is
 * written from a fixed template (every value escaped), DEFLATE-compressed (raw), base64-encoded
 * and put in the `SAMLRequest` query parameter of the IdP's SSO URL, with the `RelayState`. It is
 * not signed (the SP metadata says `AuthnRequestsSigned="false"`).
 *
 * @module
 */
import { escapeXml, NS } from "./xml.ts";

/** What the request says. */
export interface AuthnRequestInput {
  readonly ssoUrl: string;
  readonly requestId: string;
  readonly spEntityId: string;
  readonly acsUrl: string;
  readonly issueInstant: Date;
  readonly relayState: string;
}

/** The AuthnRequest's XML. */
export function authnRequestXml(input: AuthnRequestInput): string {
  return `<samlp:AuthnRequest xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${
    escapeXml(input.requestId)
  }" Version="2.0" IssueInstant="${input.issueInstant.toISOString()}" Destination="${
    escapeXml(input.ssoUrl)
  }" AssertionConsumerServiceURL="${
    escapeXml(input.acsUrl)
  }" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"><saml:Issuer>${
    escapeXml(input.spEntityId)
  }</saml:Issuer><samlp:NameIDPolicy AllowCreate="true"/></samlp:AuthnRequest>`;
}

async function deflateRaw(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The URL the browser is sent to (HTTP-Redirect binding). */
export async function authnRequestUrl(input: AuthnRequestInput): Promise<string> {
  const deflated = await deflateRaw(authnRequestXml(input));
  let binary = "";
  for (const byte of deflated) binary += String.fromCharCode(byte);
  const url = new URL(input.ssoUrl);
  url.searchParams.set("SAMLRequest", btoa(binary));
  url.searchParams.set("RelayState", input.relayState);
  return url.href;
}
