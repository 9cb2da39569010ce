/**
 * Who reads the details of `GET /readyz` besides the metrics token: an administrator holding a
 * realm-wide break-glass permission (the details report the break-glass drill, the database and
 * the installed plugins' checks). Anyone else, a caller with a bad or expired token included,
 * gets the status and check names only: readiness never answers 401.
 *
 * @module
 */
import type { Context } from "hono";
import {
  BREAK_GLASS_MANAGE_GLOBAL,
  BREAK_GLASS_READ_GLOBAL,
} from "../../core/definitions/permissions/impersonation.ts";
import { SvcError } from "../../core/errors.ts";
import type { SubjectSnapshots } from "../../core/snapshots/service.ts";
import { fence } from "../auth/fence.ts";
import type { SvcEnv } from "../request-id.ts";

/** The `readinessDetails` of `createApp`: true for a caller holding break-glass read or manage realm-wide. */
export function readinessDetailsForAdmins(
  snapshots: SubjectSnapshots,
): (c: Context<SvcEnv>) => Promise<boolean> {
  return async (c) => {
    try {
      await fence(c, snapshots, { global: [BREAK_GLASS_READ_GLOBAL, BREAK_GLASS_MANAGE_GLOBAL] });
      return true;
    } catch (error) {
      if (error instanceof SvcError) return false;
      throw error;
    }
  };
}
