// The declarations of `@xmldom/xmldom` the SAML plugin uses, without the package's `lib.dom`
// reference (see dom.ts).
import type { XmlDocument } from "./dom.ts";

/** Receives the parser's warnings and errors. */
export interface ErrorHandler {
  warning?(message: string): void;
  error?(message: string): void;
  fatalError?(message: string): void;
}

/** The XML parser. */
export declare class DOMParser {
  constructor(options?: { errorHandler?: ErrorHandler });
  parseFromString(source: string, mimeType?: string): XmlDocument;
}

/** The XML serializer. */
export declare class XMLSerializer {
  serializeToString(node: unknown): string;
}
