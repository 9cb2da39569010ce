/**
 * A SCIM write as its handler sees it, whether it came as an HTTP request to the resource's
 * route or as an operation of a `/Bulk` request: both go through the same handler.
 *
 * @module
 */
import type { ScimConnection } from "./store.ts";

/**
 * One write on a resource, from its HTTP route or from an operation of a `/Bulk` request: the
 * same handler serves both.
 */
export interface ScimCall {
  /** The authenticated connection. */
  readonly connection: ScimConnection;
  /** The resource's id (lowercase), or "" for a collection. */
  readonly id: string;
  /** The request body, parsed and checked (a JSON object without U+0000). */
  body(): Promise<Record<string, unknown>>;
  /** The `If-Match` precondition (a bulk operation's `version`), or undefined. */
  readonly ifMatch: string | undefined;
}

/** A handler of a SCIM write. */
export type ScimHandler = (call: ScimCall) => Promise<Response>;
