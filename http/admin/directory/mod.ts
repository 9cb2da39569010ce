/**
 * The directory part of the admin API: realms, organizations (with their domains and members),
 * teams and groups. Each module documents its routes and fences; this lists them in order.
 *
 * @module
 */
import type { RouteInstaller } from "../../app.ts";
import type { AdminRouteDeps } from "../deps.ts";
import { domainRoutes } from "./domains.ts";
import { groupRoutes } from "./groups.ts";
import { memberRoutes } from "./members.ts";
import { organizationRoutes } from "./organizations.ts";
import { realmRoutes } from "./realms.ts";
import { teamRoutes } from "./teams.ts";

/** Every directory admin route module. */
export function directoryRoutes(deps: AdminRouteDeps): RouteInstaller[] {
  return [
    realmRoutes(deps),
    organizationRoutes(deps),
    domainRoutes(deps),
    memberRoutes(deps),
    teamRoutes(deps),
    groupRoutes(deps),
  ];
}
