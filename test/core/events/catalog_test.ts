import { strict as assert } from "node:assert";
import {
  EVENT_CATALOG,
  EVENT_FAMILIES,
  EVENT_KINDS,
  eventFamilyOf,
  isEventKind,
  isEventPattern,
  isSecurityLedgerKind,
} from "../../../core/events/catalog.ts";
import { INVALID_GRANTS_EVENT } from "../../../core/snapshots/service.ts";

Deno.test("the catalog pins spec section 6: every family and every single kind, as stable strings", () => {
  assert.deepEqual([...EVENT_FAMILIES], [
    "login",
    "mfa",
    "passkey",
    "risk",
    "abuse",
    "oidc",
    "saml",
    "federation",
    "workload",
    "breakglass",
    "impersonation",
    "user",
    "webhook",
    "organization",
    "group",
    "team",
    "realm",
    "role",
    "service_account",
    "api_key",
    "signing_key",
  ]);
  const named = Object.values(EVENT_KINDS);
  for (
    const kind of [
      "token.refresh_reuse_detected",
      "risk.evaluated",
      "abuse.counter_store_unavailable",
      "passkey.signcount_regression",
      "breakglass.login",
      "breakglass.rotation_required",
      "webhook.endpoint_disabled",
      "authz.shadow_divergence",
    ]
  ) assert.ok((named as string[]).includes(kind), kind);
  assert.ok((named as string[]).includes(INVALID_GRANTS_EVENT));
  const catalogKinds = EVENT_CATALOG.map((e) => e.kind);
  assert.equal(new Set(catalogKinds).size, catalogKinds.length);
  for (const family of EVENT_FAMILIES) assert.ok(catalogKinds.includes(`${family}.*`));
  for (const kind of named) assert.ok(catalogKinds.includes(kind) && isEventKind(kind), kind);
});

Deno.test("kinds, families, patterns and the security ledger", () => {
  assert.equal(eventFamilyOf("login.succeeded"), "login");
  assert.equal(eventFamilyOf("token.refresh_reuse_detected"), null);
  assert.equal(isEventKind("login.new_device"), true);
  assert.equal(isEventKind("token.other"), false);
  assert.equal(isEventKind("Login.failed"), false);
  assert.equal(isEventKind("login"), false);
  assert.equal(isSecurityLedgerKind("mfa.failed"), true);
  assert.equal(isSecurityLedgerKind("token.refresh_reuse_detected"), true);
  assert.equal(isSecurityLedgerKind("webhook.endpoint_disabled"), false);
  assert.equal(isSecurityLedgerKind("saml.sign_in"), true);
  assert.equal(isSecurityLedgerKind("federation.login"), true);
  assert.equal(isSecurityLedgerKind("authz.invalid_grants_skipped"), false);
  for (const ok of ["login.*", "*", "*.failed", "webhook.endpoint_disabled"]) {
    assert.equal(isEventPattern(ok), true);
  }
  for (const bad of ["", "Login.*", "login..x", ".x", "login.", "a b"]) {
    assert.equal(isEventPattern(bad), false);
  }
});
