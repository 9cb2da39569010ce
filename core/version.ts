/**
 * The version of svc, as published in `deno.json` and `package.json` (a test keeps the three
 * equal). The OpenAPI document's `info.version` carries it.
 *
 * @module
 */

/** The svc version. */
export const SVC_VERSION = "0.1.0";
