// The declarations of `xml-crypto` the SAML plugin uses, without the `lib.dom` reference its
// types pull in through `xpath` (see dom.ts).
import type { XmlNode } from "./dom.ts";

/** A reference of a loaded signature. */
export interface Reference {
  readonly uri?: string;
}

/** XML-DSig signing and verification. */
export declare class SignedXml {
  constructor(options?: {
    publicCert?: string;
    getCertFromKeyInfo?: (keyInfo?: XmlNode | null) => string | null;
  });
  loadSignature(signatureNode: XmlNode | string): void;
  checkSignature(xml: string): boolean;
  getReferences(): Reference[];
  getSignedReferences(): string[];
}
