/** Every admin route case, by area (each area file owns its routes). */
import type { AdminRouteCase } from "./case.ts";
import { CASES as credentials } from "./cases/credentials.ts";
import { CASES as directory } from "./cases/directory.ts";
import { CASES as existing } from "./cases/existing.ts";
import { CASES as federation } from "./cases/federation.ts";
import { CASES as impersonation } from "./cases/impersonation.ts";
import { CASES as oidc } from "./cases/oidc.ts";
import { CASES as imports } from "./cases/imports.ts";
import { CASES as shadow } from "./cases/shadow.ts";
import { CASES as mail } from "./cases/mail.ts";
import { CASES as roles } from "./cases/roles.ts";
import { CASES as scim } from "./cases/scim.ts";
import { CASES as saml } from "./cases/saml.ts";
import { CASES as users } from "./cases/users.ts";
import { CASES as workload } from "./cases/workload.ts";

/** All cases. */
export const ADMIN_CASES: readonly AdminRouteCase[] = [
  ...existing,
  ...directory,
  ...users,
  ...roles,
  ...credentials,
  ...impersonation,
  ...oidc,
  ...imports,
  ...shadow,
  ...mail,
  ...workload,
  ...federation,
  ...scim,
  ...saml,
];
