/**
 * A test-only authenticator: the caller is named by the `X-Test-Subject` header as JSON
 * `{ "userId", "realmId", "orgId"? }`. It lives under `test/` so that no server can ever
 * install it; real servers authenticate with tokens.
 */
import type { Authenticator, Principal } from "../../http/auth/principal.ts";

/** The header the test authenticator reads. */
export const TEST_SUBJECT_HEADER = "X-Test-Subject";

/** The test authenticator. */
export const testSubjectAuthenticator: Authenticator = (c) => {
  const header = c.req.header(TEST_SUBJECT_HEADER);
  if (header === undefined) return Promise.resolve(null);
  const parsed = JSON.parse(header) as { userId: string; realmId: string; orgId?: string | null };
  const principal: Principal = {
    userId: parsed.userId,
    realmId: parsed.realmId,
    orgId: parsed.orgId ?? null,
    sessionId: null,
  };
  return Promise.resolve(principal);
};

/** Request headers naming a test subject. */
export function asSubject(
  userId: string,
  realmId: string,
  orgId: string | null = null,
): Record<string, string> {
  return { [TEST_SUBJECT_HEADER]: JSON.stringify({ userId, realmId, orgId }) };
}
