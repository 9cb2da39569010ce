/**
 * XML as the SAML plugin reads it: parsed by `@xmldom/xmldom` (never by hand), after refusing
 * any document that declares a DTD (`<!DOCTYPE`, `<!ENTITY`): no entity is ever expanded and no
 * external resource is ever fetched. A parse warning or error refuses the document. Helpers walk
 * elements by namespace and local name only (prefixes are the sender's choice).
 *
 * @module
 */
// @ts-types="./xmldom.d.ts"
import { DOMParser } from "@xmldom/xmldom";
import { SvcError } from "../../mod.ts";
import type { XmlDocument, XmlElement, XmlNode } from "./dom.ts";
import { MAX_XML_CHARS } from "./limits.ts";

/** The namespaces SAML messages and metadata use. */
export const NS = {
  protocol: "urn:oasis:names:tc:SAML:2.0:protocol",
  assertion: "urn:oasis:names:tc:SAML:2.0:assertion",
  metadata: "urn:oasis:names:tc:SAML:2.0:metadata",
  dsig: "http://www.w3.org/2000/09/xmldsig#",
  xenc: "http://www.w3.org/2001/04/xmlenc#",
} as const;

/** A document svc will not read. Code `saml_xml_refused`; `reason` is recorded, never shown. */
export class SamlXmlError extends SvcError {
  constructor(readonly reason: string) {
    super("saml_xml_refused", "The XML document was refused.", 400);
    this.name = "SamlXmlError";
  }
}

export { MAX_XML_CHARS } from "./limits.ts";

/** Whether the text declares a DTD or an entity anywhere (refused before parsing). */
export function declaresDtd(text: string): boolean {
  return /<!\s*(?:doctype|entity|element|attlist|notation)/i.test(text);
}

/** Parses `text` as XML: a DTD, a parse warning or error, or more than `maxChars` refuses it. */
export function parseXml(text: string, maxChars = MAX_XML_CHARS): XmlElement {
  if (text.length > maxChars) throw new SamlXmlError("document too large");
  if (text.includes("\u0000")) throw new SamlXmlError("U+0000 in document");
  if (declaresDtd(text)) throw new SamlXmlError("DTD declared");
  const fail = (level: string) => (message: string) => {
    throw new SamlXmlError(`xml ${level}: ${String(message).slice(0, 120)}`);
  };
  let doc: XmlDocument;
  try {
    doc = new DOMParser({
      errorHandler: { warning: fail("warning"), error: fail("error"), fatalError: fail("fatal") },
    }).parseFromString(text, "text/xml");
  } catch (err) {
    if (err instanceof SamlXmlError) throw err;
    throw new SamlXmlError("not well-formed XML");
  }
  const root = doc?.documentElement;
  if (!root) throw new SamlXmlError("no document element");
  for (let node = doc.firstChild; node !== null; node = node.nextSibling) {
    // A DTD node that slipped past the text check (it cannot, but the DOM says for sure).
    if (node.nodeType === 10) throw new SamlXmlError("DTD declared");
  }
  return root;
}

/** Whether `node` is an element `ns`:`localName`. */
export function isElement(node: XmlNode | null, ns: string, localName: string): node is XmlElement {
  return node !== null && node.nodeType === 1 && (node as XmlElement).namespaceURI === ns &&
    (node as XmlElement).localName === localName;
}

/** The child elements of `parent` named `ns`:`localName`, in order. */
export function children(parent: XmlElement, ns: string, localName: string): XmlElement[] {
  const found: XmlElement[] = [];
  for (let node = parent.firstChild; node !== null; node = node.nextSibling) {
    if (isElement(node, ns, localName)) found.push(node);
  }
  return found;
}

/** The one child `ns`:`localName`, or null when there is none; more than one refuses. */
export function onlyChild(parent: XmlElement, ns: string, localName: string): XmlElement | null {
  const found = children(parent, ns, localName);
  if (found.length > 1) throw new SamlXmlError(`more than one ${localName}`);
  return found[0] ?? null;
}

/** Every element `ns`:`localName` below `root` (itself included), in document order. */
export function descendants(root: XmlElement, ns: string, localName: string): XmlElement[] {
  const found: XmlElement[] = [];
  const walk = (el: XmlElement) => {
    if (isElement(el, ns, localName)) found.push(el);
    for (let node = el.firstChild; node !== null; node = node.nextSibling) {
      if (node.nodeType === 1) walk(node as XmlElement);
    }
  };
  walk(root);
  return found;
}

/** Every element below `root` (itself included) with an `ID`, `Id` or `id` attribute equal to `id`. */
export function elementsWithId(root: XmlElement, id: string): XmlElement[] {
  const found: XmlElement[] = [];
  const walk = (el: XmlElement) => {
    for (const name of ["ID", "Id", "id"]) {
      if (el.getAttribute(name) === id) {
        found.push(el);
        break;
      }
    }
    for (let node = el.firstChild; node !== null; node = node.nextSibling) {
      if (node.nodeType === 1) walk(node as XmlElement);
    }
  };
  walk(root);
  return found;
}

/** The text content of an element, trimmed. */
export function text(el: XmlElement | null): string | null {
  if (el === null) return null;
  const value = (el.textContent ?? "").trim();
  return value;
}

/** Escapes text for an XML attribute or element. */
export function escapeXml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[ch]!,
  );
}
