/**
 * The password policy: what a password someone chooses must be (sign-up completion, reset,
 * invitation, admin create, the bootstrap administrator's `SVC_BOOTSTRAP_ADMIN_PASSWORD`).
 * One definition, used by the flows, the request schemas and the configuration schema.
 *
 * @module
 */
import { ValidationError } from "../errors.ts";

/** Shortest password svc accepts when a user chooses one (reset, invitation). */
export const MIN_PASSWORD_LENGTH = 8;
/** Longest password svc accepts (hashing cost is bounded anyway; this bounds request sizes). */
export const MAX_PASSWORD_LENGTH = 1024;

/** Why a password may not be chosen (a sentence), or null when it may. */
export function passwordPolicyProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) {
    return `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`;
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    return `The password must have at most ${MAX_PASSWORD_LENGTH} characters.`;
  }
  return null;
}

/** Throws `ValidationError` (field `password`) unless the password may be chosen. */
export function assertChoosablePassword(password: string): void {
  const problem = passwordPolicyProblem(password);
  if (problem !== null) throw new ValidationError(problem, { field: "password" });
}
