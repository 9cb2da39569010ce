/** Admin route cases: shadow-mode authorization (realm-wide only; comparisons are telemetry, not audited). */
import type { AdminRouteCase } from "../case.ts";

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: "POST /svc-admin/authz/shadow",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: (bed) =>
      Promise.resolve({
        path: "/svc-admin/authz/shadow",
        body: { userId: bed.users.plain, permission: "docs:global:read", legacyDecision: false },
      }),
  },
  {
    route: "GET /svc-admin/authz/shadow/report",
    mutates: false,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () => Promise.resolve({ path: "/svc-admin/authz/shadow/report?permission=docs:global:read" }),
  },
];
