/**
 * A second realm beside an admin bed's (issue 24): its administrator holds every `svc:`
 * permission (and any extra patterns given), but only in that realm. Cross-realm tests call the
 * same app with its token against the first realm's objects.
 */
import type { AdminBed } from "./admin.ts";
import { seeder } from "./seed.ts";

/** The second realm and its administrator. */
export interface OtherRealm {
  readonly realmId: string;
  /** The administrator's user id. */
  readonly adminId: string;
  /** The administrator's access token. */
  readonly token: string;
  /** Calls the bed's app (or `app`) as the administrator of the second realm; a body is sent as JSON. */
  request(
    method: string,
    path: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
}

/** Creates a realm with an administrator (`svc:*:*` plus `extraPatterns`), signed in. */
export async function otherRealm(
  admin: AdminBed,
  options: {
    extraPatterns?: readonly string[];
    app?: { request(path: string, init: RequestInit): Response | Promise<Response> };
  } = {},
): Promise<OtherRealm> {
  const seed = seeder(admin.bed.database.db);
  const realmId = await seed.realm();
  const adminId = await seed.user(realmId);
  const role = await seed.role(realmId, "realm-admin", [
    { pattern: "svc:*:*" },
    ...(options.extraPatterns ?? []).map((pattern) => ({ pattern })),
  ]);
  await seed.assign(realmId, role, { kind: "User", id: adminId });
  await admin.bed.snapshots.invalidateAll();
  const signed = await admin.bed.auth.sessions.signIn({
    realmId,
    userId: adminId,
    orgId: null,
    mfa: "MultiFactor",
  });
  const token = signed.tokens.accessToken;
  const app = options.app ?? admin.app;
  return {
    realmId,
    adminId,
    token,
    request(method, path, request = {}) {
      const headers: Record<string, string> = { ...request.headers, Authorization: `Bearer ${token}` };
      let body: string | undefined;
      if (request.body !== undefined) {
        headers["Content-Type"] ??= "application/json";
        body = typeof request.body === "string" ? request.body : JSON.stringify(request.body);
      }
      return Promise.resolve(app.request(path, { method, headers, body }));
    },
  };
}
