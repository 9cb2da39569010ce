/**
 * The OpenAPI document as the full app (`svcRoutes`, what `svc start` serves) serves it:
 *
 * - it validates against the OpenAPI 3.1 schema;
 * - every route registered on the app appears in it with its method, and nothing it documents
 *   is unregistered;
 * - a scripted session of real requests (login, refresh, profile, sessions, factors, passkey
 *   options, webhooks, audit, inspect, invite, service accounts, API keys, signing keys) sends
 *   bodies its request schemas accept and gets answers its response schemas describe: a status
 *   the operation does not document, or a body that does not validate, fails the test.
 */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import type { AdminBed, AdminCaller } from "../../support/admin.ts";
import { adminBed } from "../../support/admin.ts";
import { openApiPath } from "../../../http/openapi/document.ts";
import { isEmbeddedAppRoute } from "../../../http/svc-routes.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

async function servedDocument(admin: AdminBed): Promise<Json> {
  const res = await admin.app.request("/openapi.json");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("Content-Type") ?? "", /application\/json/);
  return await res.json();
}

/** `GET /auth/passkey/` is the same operation as `GET /auth/passkey`. */
function normalize(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  return openApiPath(trimmed);
}

/** Checks bodies against the document's schemas with ajv (JSON Schema 2020-12). */
class Conformance {
  // deno-lint-ignore no-explicit-any
  readonly #ajv = new (Ajv2020 as any)({ strict: false, allErrors: true, validateFormats: false });
  readonly #compiled = new Map<unknown, (data: unknown) => boolean>();
  readonly checked: string[] = [];

  constructor(readonly doc: Json) {}

  #validate(schema: Json, data: unknown, what: string): void {
    let validate = this.#compiled.get(schema);
    if (validate === undefined) {
      // The document's `#/components/schemas/…` references resolve against this root.
      validate = this.#ajv.compile({ ...schema, components: this.doc.components }) as (d: unknown) => boolean;
      this.#compiled.set(schema, validate);
    }
    if (!validate(data)) {
      const errors = (validate as unknown as { errors: unknown }).errors;
      assert.fail(`${what} does not match the document: ${JSON.stringify(errors)}\n${JSON.stringify(data)}`);
    }
  }

  operation(method: string, path: string): Json {
    const item = this.doc.paths[normalize(path)];
    assert.ok(item, `${path} is not in the document`);
    const op = item[method.toLowerCase()];
    assert.ok(op, `${method} ${path} is not in the document`);
    return op;
  }

  request(method: string, route: string, body: unknown): void {
    const op = this.operation(method, route);
    const schema = op.requestBody?.content?.["application/json"]?.schema;
    assert.ok(schema, `${method} ${route} documents no request body`);
    this.#validate(schema, body, `the request body of ${method} ${route}`);
  }

  response(method: string, route: string, status: number, body: unknown): void {
    const op = this.operation(method, route);
    const response = op.responses[String(status)];
    assert.ok(response, `${method} ${route} answered ${status}, which it does not document`);
    const schema = response.content?.["application/json"]?.schema;
    if (body === undefined) {
      assert.equal(schema, undefined, `${method} ${route} ${status} documents a body but answered none`);
    } else {
      assert.ok(schema, `${method} ${route} ${status} answered a body it does not document`);
      this.#validate(schema, body, `the ${status} answer of ${method} ${route}`);
    }
    this.checked.push(`${method} ${route} ${status}`);
  }
}

Deno.test("the served OpenAPI document", async (t) => {
  const admin = await adminBed();
  try {
    const doc = await servedDocument(admin);

    await t.step("validates against the OpenAPI 3.1 schema", async () => {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      assert.equal(validator.version, "3.1");
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
      assert.equal(doc.info.version, "0.1.0");
      assert.equal(doc.servers[0].url, admin.bed.config.server.baseUrl);
    });

    await t.step("every registered route is documented with its method, and only those", () => {
      const registered = new Set(
        admin.app.routes
          // The embedded page apps (the console…) are static pages, not API operations.
          .filter((r) => r.method !== "ALL" && !isEmbeddedAppRoute(admin.bed.config, r.path))
          .map((r) => `${r.method} ${normalize(r.path)}`),
      );
      const documented = new Set<string>();
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
        for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
      }
      assert.deepEqual([...registered].filter((r) => !documented.has(r)).sort(), [], "undocumented routes");
      assert.deepEqual(
        [...documented].filter((r) => !registered.has(r)).sort(),
        [],
        "documented, not served",
      );
      // The admin routes of every area are there (the fence matrix walks the same list).
      assert.ok(registered.has("POST /svc-admin/service-accounts"));
      assert.ok(registered.has("GET /healthz") && registered.has("GET /openapi.json"));
    });

    await t.step("every operation names its tags, answers, and its fence when it has one", () => {
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
        for (const [method, op] of Object.entries(item)) {
          assert.ok(op.tags.length > 0 && op.summary, `${method} ${path}`);
          assert.ok(Object.keys(op.responses).some((s) => s.startsWith("2")), `${method} ${path}: a 2xx`);
          if (path.startsWith("/svc-admin/")) {
            // Every admin route declares its fence; an empty list only where the route says who
            // may call it instead (consent approval: the target user, signed in as themselves).
            const declared = op["x-svc-permissions"];
            assert.ok(Array.isArray(declared), `${method} ${path}: x-svc-permissions`);
            if (declared.length === 0) {
              assert.match(op.description ?? "", /only|target|signed in/i, `${method} ${path}`);
            }
          }
        }
      }
    });

    await t.step("real requests and answers match the document", async () => {
      const conformance = new Conformance(doc);
      /** Sends a request, checks its body and its answer against the document, returns the answer. */
      const call = async (
        method: string,
        route: string,
        path: string,
        options: {
          as?: AdminCaller | null;
          body?: unknown;
          headers?: Record<string, string>;
          token?: string;
        } = {},
      ): Promise<{ status: number; body: Json }> => {
        if (options.body !== undefined) conformance.request(method, route, options.body);
        const headers = { ...options.headers };
        if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
        const res = await admin.request(method, path, {
          as: options.token !== undefined ? null : options.as,
          body: options.body,
          headers,
        });
        const text = await res.text();
        const body = text === "" ? undefined : JSON.parse(text);
        conformance.response(method, route, res.status, body);
        return { status: res.status, body };
      };

      // Sign-in, refresh and the caller's own views.
      const login = await call("POST", "/auth/login", "/auth/login", {
        as: null,
        body: { email: "root@example.test", password: "bootstrap secret" },
      });
      assert.equal(login.status, 200);
      assert.ok(login.body.accessToken, JSON.stringify(login.body));
      const refreshed = await call("POST", "/auth/refresh", "/auth/refresh", {
        as: null,
        body: { refreshToken: login.body.refreshToken },
      });
      assert.equal(refreshed.status, 200);
      const token = refreshed.body.accessToken as string;
      await call("POST", "/auth/login", "/auth/login", {
        as: null,
        body: { email: "root@example.test", password: "wrong password" },
      });
      assert.equal((await call("GET", "/profile/me", "/profile/me", { token })).status, 200);
      const sessions = await call("GET", "/profile/sessions", "/profile/sessions", { token });
      assert.ok(sessions.body.sessions.length >= 1);
      await call("GET", "/profile/permissions", "/profile/permissions", { token });
      await call("GET", "/profile/security-events", "/profile/security-events?limit=5", { token });
      await call("GET", "/profile/factors", "/profile/factors", { token });
      await call("GET", "/profile/factors/recovery-codes", "/profile/factors/recovery-codes", { token });
      const totp = await call("POST", "/profile/factors/totp", "/profile/factors/totp", { token });
      assert.equal(totp.status, 200);
      await call("POST", "/profile/factors/totp/confirm", "/profile/factors/totp/confirm", {
        token,
        body: { code: "000000" },
      });
      await call("POST", "/auth/passkey/register/options", "/auth/passkey/register/options", {
        token,
        body: { name: "laptop" },
      });
      await call("GET", "/auth/passkey/login/options", "/auth/passkey/login/options", { as: null });
      await call("POST", "/auth/passkey/login/options", "/auth/passkey/login/options", {
        as: null,
        body: { email: "root@example.test" },
      });
      await call("GET", "/auth/passkey", "/auth/passkey", { token });
      await call("GET", "/healthz", "/healthz", { as: null });
      await call("GET", "/readyz", "/readyz", { as: null });
      await call("GET", "/.well-known/jwks.json", "/.well-known/jwks.json", { as: null });

      // Webhooks.
      const endpoint = await call("POST", "/svc-admin/webhooks", "/svc-admin/webhooks", {
        body: { url: "https://hooks.example.com/svc", eventPatterns: ["user.*"], description: "CRM" },
      });
      assert.equal(endpoint.status, 201);
      const item = `/svc-admin/webhooks/${endpoint.body.id}`;
      await call("GET", "/svc-admin/webhooks", "/svc-admin/webhooks");
      await call("PATCH", "/svc-admin/webhooks/:endpointId", item, { body: { enabled: false } });
      await call("POST", "/svc-admin/webhooks/:endpointId/test", `${item}/test`);
      await call("GET", "/svc-admin/webhooks/:endpointId/deliveries", `${item}/deliveries?limit=10`);
      await call("GET", "/svc-admin/webhooks/:endpointId/deliveries", `${item}/deliveries?status=nope`);

      // Audit, inspect, invite.
      await call("GET", "/svc-admin/audit/entries", "/svc-admin/audit/entries?limit=5");
      const verified = await call("GET", "/svc-admin/audit/verify", "/svc-admin/audit/verify");
      assert.equal(verified.body.valid, true);
      const inspected = await call("POST", "/svc-admin/authz/inspect", "/svc-admin/authz/inspect", {
        body: { userId: admin.users.orgA, orgId: admin.orgA, check: { permission: "svc:org:users-invite" } },
      });
      assert.equal(inspected.body.decision, "Allowed");
      await call("POST", "/svc-admin/authz/inspect", "/svc-admin/authz/inspect", {
        as: "orgB",
        body: { userId: admin.users.orgA, orgId: admin.orgA, check: { permission: "x:y:z" } },
      });
      const invited = await call("POST", "/svc-admin/users/invite", "/svc-admin/users/invite", {
        as: "orgA",
        body: { email: "invitee@example.test", displayName: "Invitee" },
      });
      assert.equal(invited.status, 201);

      // Service accounts, API keys, signing keys.
      const account = await call("POST", "/svc-admin/service-accounts", "/svc-admin/service-accounts", {
        body: { key: "ci-pipeline", displayName: "CI pipeline" },
      });
      assert.equal(account.status, 201);
      assert.match(account.body.secret, /^sas_/);
      await call("POST", "/svc-admin/service-accounts", "/svc-admin/service-accounts", {
        body: { key: "ci-pipeline", displayName: "Again" },
      });
      const accountPath = `/svc-admin/service-accounts/${account.body.id}`;
      await call("GET", "/svc-admin/service-accounts", "/svc-admin/service-accounts?limit=10");
      await call("GET", "/svc-admin/service-accounts/:serviceAccountId", accountPath);
      await call(
        "POST",
        "/svc-admin/service-accounts/:serviceAccountId/rotate-secret",
        `${accountPath}/rotate-secret`,
        {
          body: { overlapSeconds: 3600 },
        },
      );
      await call("POST", "/svc-admin/service-accounts/:serviceAccountId/disable", `${accountPath}/disable`);
      await call("POST", "/svc-admin/service-accounts/:serviceAccountId/enable", `${accountPath}/enable`);
      const key = await call("POST", "/svc-admin/api-keys", "/svc-admin/api-keys", {
        body: { ownerKind: "ServiceAccount", ownerId: account.body.id, name: "deploy" },
      });
      assert.equal(key.status, 201);
      assert.match(key.body.token, /^sak_/);
      await call(
        "GET",
        "/svc-admin/api-keys",
        `/svc-admin/api-keys?ownerKind=ServiceAccount&ownerId=${account.body.id}`,
      );
      await call("POST", "/svc-admin/api-keys/:apiKeyId/revoke", `/svc-admin/api-keys/${key.body.id}/revoke`);
      await call("GET", "/svc-admin/signing-keys", "/svc-admin/signing-keys");
      await call("POST", "/svc-admin/signing-keys/rotate", "/svc-admin/signing-keys/rotate");
      await call("DELETE", "/svc-admin/service-accounts/:serviceAccountId", accountPath);
      await call("GET", "/svc-admin/service-accounts/:serviceAccountId", accountPath);
      await call("DELETE", "/svc-admin/webhooks/:endpointId", item);

      await call("POST", "/auth/logout-all", "/auth/logout-all", { token });
      assert.ok(conformance.checked.length >= 45, `${conformance.checked.length} exchanges checked`);
    });

    await t.step("a body the document does not describe fails the check", () => {
      const conformance = new Conformance(doc);
      assert.throws(
        () => conformance.response("GET", "/healthz", 200, { status: "fine" }),
        /does not match the document/,
      );
      assert.throws(() => conformance.response("GET", "/healthz", 418, undefined), /does not document/);
      // Through a shared component ($ref) too.
      assert.throws(
        () => conformance.response("GET", "/svc-admin/service-accounts/:serviceAccountId", 200, { id: 1 }),
        /does not match the document/,
      );
      assert.throws(
        () =>
          conformance.request("POST", "/svc-admin/service-accounts", { key: "a", displayName: "b", x: 1 }),
        /does not match the document/,
      );
    });
  } finally {
    await admin.close();
  }
});
