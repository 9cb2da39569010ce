/**
 * `@svc/svc/authz`: the pure authorization engine on its own, for any JavaScript runtime and for
 * browsers (Web APIs only, no Node built-ins, no storage or HTTP): the permission grammar,
 * condition documents, the evaluator with its grant index, list visibility and the golden-vector
 * runner. Semantics per `authz-semantics.md`.
 *
 * @example
 * ```ts
 * import { compileSubject, evaluate } from "@svc/svc/authz";
 *
 * const subject = compileSubject({
 *   id: "u1",
 *   orgId: "o1",
 *   teamIds: [],
 *   attributes: {},
 *   grants: [{ pattern: "docs:org:*", effect: "Allow", source: "role:editor" }],
 * });
 * evaluate(subject, { permission: "docs:org:read", resourceOrgId: "o1" }).decision; // "Allowed"
 * ```
 *
 * @module
 */
export * from "./core/authz/mod.ts";
export type { Bucket, ServiceEntry, Slot } from "./core/authz/index.ts";
export { SvcError } from "./core/errors.ts";
