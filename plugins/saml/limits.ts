/**
 * The SAML plugin's size limits, in a module of its own that imports nothing: the plugin's
 * modules import svc's `mod.ts`, which the built-in plugins are part of, so a constant read at
 * module level must not come from a module that may still be loading.
 *
 * @module
 */

/** The largest XML document read (a response or a metadata document), in characters. */
export const MAX_XML_CHARS = 512 * 1024;
