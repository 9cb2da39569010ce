/**
 * The fence matrix of a plugin's admin routes, shared by the plugins' own fence tests (federation,
 * SAML, SCIM): every registered route under the plugin's prefix has a case, and each case is tried
 * by every caller of the plugin beds — no token (401), svc's administrator without the plugin's
 * permissions (403), a user without permissions (403), an administrator of another organization
 * (the case's `otherOrg`: 404 for an item, 200 and an empty page for the list), the organization's
 * and the realm's plugin administrators (the case's status) — with a fresh target each time, and
 * one audit chain entry for a successful mutation, none otherwise.
 *
 * @module
 */
import { strict as assert } from "node:assert";

/** Who calls, in the plugin beds' terms. */
export type PluginFenceCaller = "none" | "svcAdmin" | "plain" | "orgB" | "orgA" | "global";

/** One admin route of the plugin and what its callers get. */
export interface PluginFenceCase {
  /** `METHOD /path/:param`, as the app registers it. */
  readonly route: string;
  /** The status of the organization's and the realm's plugin administrators. */
  readonly status: number;
  /** Whether a success appends an audit chain entry. */
  readonly mutation: boolean;
  /** The status of an administrator of another organization. */
  readonly otherOrg: number;
  /** A fresh target: the path to call and its body. */
  prepare(): Promise<{ path: string; body?: unknown }>;
}

/** What {@link pluginFenceMatrix} runs against. */
export interface PluginFenceMatrix {
  /** The routes the app registered (`app.routes`). */
  readonly routes: readonly { method: string; path: string }[];
  /** The plugin's admin prefix (`/svc-admin/saml`). */
  readonly prefix: string;
  /** The list route's path: another organization's administrator gets an empty page there. */
  readonly listPath: string;
  /** The cases, one per route. */
  readonly cases: readonly PluginFenceCase[];
  /** Calls the app as `as`. */
  request(method: string, path: string, as: PluginFenceCaller, body?: unknown): Response | Promise<Response>;
  /** The realm's audit chain length. */
  chainLength(): Promise<number>;
  /** The test's own assertions on each answer (a secret never answered, `no-store`…). */
  check?(row: PluginFenceCase, as: PluginFenceCaller, status: number, res: Response, text: string): void;
}

/** Runs the route-coverage step and one step per route; see the module doc. */
export async function pluginFenceMatrix(t: Deno.TestContext, matrix: PluginFenceMatrix): Promise<void> {
  await t.step(`every ${matrix.prefix} route has a case`, () => {
    const registered = [
      ...new Set(
        matrix.routes.filter((r) => r.method !== "ALL" && r.path.startsWith(matrix.prefix))
          .map((r) => `${r.method} ${r.path}`),
      ),
    ].sort();
    assert.deepEqual(registered, matrix.cases.map((c) => c.route).sort());
  });

  for (const row of matrix.cases) {
    await t.step(row.route, async () => {
      const method = row.route.slice(0, row.route.indexOf(" "));
      const expected: [PluginFenceCaller, number][] = [
        ["none", 401],
        ["svcAdmin", 403],
        ["plain", 403],
        ["orgB", row.otherOrg],
        ["orgA", row.status],
        ["global", row.status],
      ];
      for (const [as, status] of expected) {
        const prepared = await row.prepare();
        const before = await matrix.chainLength();
        const res = await matrix.request(method, prepared.path, as, prepared.body);
        const text = await res.text();
        assert.equal(res.status, status, `${as}: ${text}`);
        const added = (await matrix.chainLength()) - before;
        assert.equal(added, row.mutation && status < 300 ? 1 : 0, `${as}: audit entries`);
        if (row.route === `GET ${matrix.listPath}` && as === "orgB") assert.equal(JSON.parse(text).total, 0);
        matrix.check?.(row, as, status, res, text);
      }
    });
  }
}
