/**
 * A plugin bed with the SCIM plugin: organizations A and B, a realm administrator of the plugin
 * (`scim:global:*`), an administrator of each organization (`scim:org:*` there), a plain member
 * of A and svc's own administrator (no plugin permission); helpers to create a connection and to
 * call its SCIM endpoints.
 */
import { strict as assert } from "node:assert";
import { type ScimConfig, scimPlugin } from "../../../plugins/scim/mod.ts";
import type { SvcPlugin } from "../../../plugins/plugin.ts";
import type { LoginBedOptions } from "../../support/login.ts";
import { type PluginBed, pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";

export type Caller = "none" | "svcAdmin" | "plain" | "orgB" | "orgA" | "global";

export interface ScimBed {
  readonly plugged: PluginBed;
  /** The plugin instance the bed runs. */
  readonly plugin: SvcPlugin<ScimConfig>;
  readonly realmId: string;
  readonly orgA: string;
  readonly orgB: string;
  readonly users: Record<Exclude<Caller, "none">, string>;
  readonly tokens: Record<Exclude<Caller, "none">, string>;
  admin(method: string, path: string, as: Caller, body?: unknown): Promise<Response>;
  /** Creates a connection for `orgId` as the realm administrator: its id and token. */
  connection(
    orgId: string,
    extra?: Record<string, unknown>,
  ): Promise<{ id: string; token: string; baseUrl: string }>;
  /** Calls a connection's SCIM endpoint (`path` below its base). */
  scim(
    conn: { id: string; token: string },
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Response>;
  chainLength(): Promise<number>;
  close(): Promise<void>;
}

export async function scimBed(
  options: LoginBedOptions = {},
  env: Record<string, string> = {},
): Promise<ScimBed> {
  const plugin = scimPlugin();
  const plugged = await pluginBed([plugin as SvcPlugin], env, options);
  const bed = plugged.admin.bed;
  const app = plugged.app;
  const realmId = bed.realmId;
  const seed = seeder(bed.database.db);
  const svcAdmin = plugged.admin.users.global;
  const [globalUser, orgAUser, orgBUser, plainUser] = [
    await seed.user(realmId),
    await seed.user(realmId),
    await seed.user(realmId),
    await seed.user(realmId),
  ];
  const orgA = await seed.org(realmId, [orgAUser, plainUser]);
  const orgB = await seed.org(realmId, [orgBUser]);
  const globalRole = await seed.role(realmId, "scim-admin", [{ pattern: "scim:global:*" }]);
  await seed.assign(realmId, globalRole, { kind: "User", id: globalUser });
  for (const [orgId, userId] of [[orgA, orgAUser], [orgB, orgBUser]]) {
    const role = await seed.role(realmId, `scim-${orgId.slice(0, 8)}`, [{ pattern: "scim:org:*" }], orgId);
    await seed.assign(realmId, role, { kind: "User", id: userId }, orgId);
  }
  await bed.snapshots.invalidateAll();
  const sign = async (userId: string, orgId: string | null) =>
    (await bed.auth.sessions.signIn({ realmId, userId, orgId, mfa: "MultiFactor" })).tokens.accessToken;
  const users = { svcAdmin, plain: plainUser, orgB: orgBUser, orgA: orgAUser, global: globalUser };
  const tokens = {
    svcAdmin: await sign(svcAdmin, null),
    plain: await sign(plainUser, orgA),
    orgB: await sign(orgBUser, orgB),
    orgA: await sign(orgAUser, orgA),
    global: await sign(globalUser, null),
  };
  const admin = (method: string, path: string, as: Caller, body?: unknown) =>
    Promise.resolve(app.request(path, {
      method,
      headers: {
        ...(as === "none" ? {} : { Authorization: `Bearer ${tokens[as]}` }),
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }));
  return {
    plugged,
    plugin,
    realmId,
    orgA,
    orgB,
    users,
    tokens,
    admin,
    async connection(orgId, extra = {}) {
      const res = await admin("POST", "/svc-admin/scim/connections", "global", {
        orgId,
        displayName: "Okta",
        ...extra,
      });
      assert.equal(res.status, 201, await res.clone().text());
      const body = await res.json();
      return { id: body.id, token: body.token, baseUrl: body.baseUrl };
    },
    scim(conn, method, path, body, headers = {}) {
      return Promise.resolve(app.request(`/scim/v2/${conn.id}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${conn.token}`,
          ...(body === undefined ? {} : { "Content-Type": "application/scim+json" }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      }));
    },
    async chainLength() {
      return (await bed.storage.adminAudit.list(realmId)).length;
    },
    close: () => plugged.close(),
  };
}
