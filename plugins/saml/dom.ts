/**
 * The part of the DOM the SAML plugin reads, as its own types: the XML libraries' declarations
 * reference the browser's `lib.dom`, which would change the global types of every module type-
 * checked with svc (Deno's `Response`, streams…). The plugin imports them with `@ts-types`
 * pointing at `xmldom.d.ts` and `xml-crypto.d.ts`, which use these.
 *
 * @module
 */

/** A node. */
export interface XmlNode {
  readonly nodeType: number;
  readonly parentNode: XmlNode | null;
  readonly firstChild: XmlNode | null;
  readonly nextSibling: XmlNode | null;
  readonly textContent: string | null;
}

/** An element. */
export interface XmlElement extends XmlNode {
  readonly namespaceURI: string | null;
  readonly localName: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
}

/** A document. */
export interface XmlDocument extends XmlNode {
  readonly documentElement: XmlElement | null;
}
