/** Admin route cases: imports (realm-wide only). */
import { uuid } from "../../../support/seed.ts";
import type { AdminRouteCase } from "../case.ts";

/** The cases of this area. */
export const CASES: readonly AdminRouteCase[] = [
  {
    route: "POST /svc-admin/imports/:kind",
    mutates: true,
    orgAdmin: false,
    otherOrg: 403,
    status: 200,
    prepare: () =>
      Promise.resolve({
        path: "/svc-admin/imports/auth0",
        // One line of an Auth0 export (JSON bodies are sent on one line).
        body: { email: `imported-${uuid()}@example.test`, email_verified: true },
      }),
  },
];
