/**
 * The directory admin routes beyond the fence matrix: realms managed from the default realm
 * only and the atomic default switch; organization ETags (412 on a stale write), search and the
 * deletion cascade; domain verification through a fake DNS resolver (constant-time token
 * compare, chunked TXT records, failures that change nothing) and the audited override; members
 * (events, snapshot eviction, paging, leaving teams); team and group membership rules.
 */
import { checkedSink } from "../../support/events.ts";
import { strict as assert } from "node:assert";
import { EventPublisher } from "../../../core/events/publisher.ts";
import type { SvcEvent } from "../../../core/events/sink.ts";
import { createApp, type SvcApp } from "../../../http/app.ts";
import type { TxtResolver } from "../../../http/admin/deps.ts";
import { directoryRoutes } from "../../../http/admin/directory/mod.ts";
import { EMAIL_DOMAIN } from "../../../core/storage/organizations.ts";
import { type AdminBed, adminBed, type AdminCaller } from "../../support/admin.ts";
import { seeder } from "../../support/seed.ts";

/** The directory routes over an admin bed's stacks, with a fake DNS resolver. */
function directoryApp(admin: AdminBed, resolveTxt: TxtResolver | undefined, events: SvcEvent[]): SvcApp {
  const { bed } = admin;
  const publisher = new EventPublisher({
    storage: bed.storage,
    sink: checkedSink((event) => void events.push(event)),
    random: bed.random,
  });
  return createApp({
    config: bed.config,
    readinessChecks: [],
    clock: bed.clock,
    random: bed.random,
    authenticator: bed.auth.authenticator,
    routes: directoryRoutes({
      storage: bed.storage,
      snapshots: bed.snapshots,
      publisher,
      passwords: bed.login.passwords,
      accounts: bed.login.accounts,
      keys: bed.auth.keys,
      resolveTxt,
    }),
  });
}

Deno.test("directory admin routes", async (t) => {
  const admin = await adminBed();
  const storage = admin.bed.storage;
  const events: SvcEvent[] = [];
  let dns: Record<string, string[][]> = {};
  const looked: string[] = [];
  const app = directoryApp(admin, (name) => {
    looked.push(name);
    const records = dns[name];
    return records === undefined ? Promise.reject(new Error("NXDOMAIN")) : Promise.resolve(records);
  }, events);
  const call = async (
    method: string,
    path: string,
    options: { as?: AdminCaller | string; body?: unknown; headers?: Record<string, string>; on?: SvcApp } =
      {},
  ) => {
    const as = options.as ?? "global";
    const token = as in admin.tokens ? admin.tokens[as as AdminCaller] : as;
    const res = await (options.on ?? app).request(path, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(options.body === undefined ? {} : { "Content-Type": "application/json" }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : null };
  };
  const evicted: string[] = [];
  let evictedAll = 0;
  const snapshots = admin.bed.snapshots;
  const invalidateUser = snapshots.invalidateUser.bind(snapshots);
  const invalidateAll = snapshots.invalidateAll.bind(snapshots);
  snapshots.invalidateUser = (userId) => (evicted.push(userId), invalidateUser(userId));
  snapshots.invalidateAll = () => (evictedAll++, invalidateAll());
  const newUser = async (email = `${crypto.randomUUID()}@example.test`) =>
    (await storage.users.create({ realmId: admin.realmId, email })).id;

  try {
    await t.step("realms: managed from the default realm only; the default switches atomically", async () => {
      const created = await call("POST", "/svc-admin/realms", {
        body: { name: "second", displayName: "Second" },
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      assert.equal(created.json.isDefault, false);
      assert.notEqual(
        await storage.signingKeys.getPrimary(created.json.id),
        null,
        "a new realm has its signing key",
      );
      const conflict = await call("POST", "/svc-admin/realms", {
        body: { name: "second", displayName: "Again" },
      });
      assert.deepEqual([conflict.status, conflict.json.error.code], [409, "realm_name_taken"]);
      const unset = await call("PATCH", `/svc-admin/realms/${admin.realmId}`, { body: { isDefault: false } });
      assert.deepEqual([unset.status, unset.json.error.code], [409, "default_realm_required"]);

      // An administrator holding every svc: permission in another realm cannot touch realms.
      const seed = seeder(admin.bed.database.db);
      const outsider = await seed.user(created.json.id);
      const role = await seed.role(created.json.id, "svc-admin-2", [{ pattern: "svc:*:*" }]);
      await seed.assign(created.json.id, role, { kind: "User", id: outsider });
      const outsiderToken = (await admin.bed.auth.sessions.signIn({
        realmId: created.json.id,
        userId: outsider,
        orgId: null,
        mfa: "MultiFactor",
      })).tokens.accessToken;
      assert.equal((await call("GET", "/svc-admin/realms", { as: outsiderToken })).status, 403);

      const before = await admin.chainLength();
      const switched = await call("PATCH", `/svc-admin/realms/${created.json.id}`, {
        body: { isDefault: true },
      });
      assert.equal(switched.status, 200);
      assert.equal(switched.json.isDefault, true);
      assert.equal(await admin.chainLength(), before + 1);
      assert.equal((await storage.realms.get(admin.realmId))?.isDefault, false);
      // Now the other realm is the master: the roles reverse.
      assert.equal((await call("GET", "/svc-admin/realms", { as: outsiderToken })).status, 200);
      assert.equal((await call("GET", "/svc-admin/realms")).status, 403);
      const back = await call("PATCH", `/svc-admin/realms/${admin.realmId}`, {
        as: outsiderToken,
        body: { isDefault: true },
      });
      assert.equal(back.status, 200);
      const listed = await call("GET", "/svc-admin/realms?limit=1&offset=1");
      assert.equal(listed.status, 200);
      assert.deepEqual([listed.json.items.length, listed.json.total, listed.json.limit], [1, 2, 1]);
      assert.equal((await call("GET", "/svc-admin/realms/not-a-uuid")).status, 404);
    });

    await t.step("realms: self sign-up and branding, validated and audited", async () => {
      const fresh = await call("GET", `/svc-admin/realms/${admin.realmId}`);
      assert.equal(fresh.json.selfSignUp, false, "self sign-up is off by default");
      assert.deepEqual(fresh.json.branding, { productName: null, color: null, logoUrl: null });
      const before = await admin.chainLength();
      const branding = {
        productName: "Acme ID",
        color: "#AA3300",
        logoUrl: "https://cdn.example.com/logo.svg",
      };
      const set = await call("PATCH", `/svc-admin/realms/${admin.realmId}`, {
        body: { selfSignUp: true, branding },
      });
      assert.equal(set.status, 200, JSON.stringify(set.json));
      assert.equal(set.json.selfSignUp, true);
      assert.deepEqual(set.json.branding, { ...branding, color: "#aa3300" });
      assert.equal(await admin.chainLength(), before + 1, "one audit entry");
      const same = await call("PATCH", `/svc-admin/realms/${admin.realmId}`, {
        body: { selfSignUp: true, branding },
      });
      assert.equal(same.status, 200);
      assert.equal(await admin.chainLength(), before + 1, "no change, no entry");
      for (
        const bad of [
          { branding: { ...branding, color: "red" } },
          { branding: { ...branding, color: "#12345" } },
          { branding: { ...branding, logoUrl: "http://cdn.example.com/logo.svg" } },
          { branding: { ...branding, logoUrl: "javascript:alert(1)" } },
          { branding: { ...branding, productName: "A\u0000B" } },
          { branding: { productName: "only one field" } },
          { selfSignUp: "yes" },
        ]
      ) {
        const res = await call("PATCH", `/svc-admin/realms/${admin.realmId}`, { body: bad });
        assert.equal(res.status, 400, JSON.stringify(bad));
      }
      const reset = await call("PATCH", `/svc-admin/realms/${admin.realmId}`, {
        body: { selfSignUp: false, branding: { productName: null, color: null, logoUrl: null } },
      });
      assert.equal(reset.json.selfSignUp, false);
      assert.equal((await storage.realms.get(admin.realmId))?.branding.productName, null);
    });

    await t.step(
      "organizations: ETag and If-Match (412 on a stale write), search, 404 for others",
      async () => {
        const read = await call("GET", `/svc-admin/organizations/${admin.orgA}`, { as: "orgA" });
        assert.equal(read.status, 200);
        const etag = read.headers.get("ETag")!;
        assert.equal(etag, `"${read.json.version}"`);
        const ok = await call("PATCH", `/svc-admin/organizations/${admin.orgA}`, {
          as: "orgA",
          body: { displayName: "Acme A", defaultIdentityProviderId: "okta" },
          headers: { "If-Match": etag },
        });
        assert.equal(ok.status, 200, JSON.stringify(ok.json));
        assert.equal(ok.headers.get("ETag"), `"${read.json.version + 1}"`);
        const before = await admin.chainLength();
        const stale = await call("PATCH", `/svc-admin/organizations/${admin.orgA}`, {
          body: { displayName: "Lost update" },
          headers: { "If-Match": etag },
        });
        assert.deepEqual([stale.status, stale.json.error.code], [412, "precondition_failed"]);
        assert.equal(await admin.chainLength(), before, "a stale write appends nothing");
        assert.equal((await storage.organizations.get(admin.orgA))?.displayName, "Acme A");
        assert.equal(
          (await call("GET", `/svc-admin/organizations/${admin.orgA}`, { as: "orgB" })).status,
          404,
        );
        const status = await call("PATCH", `/svc-admin/organizations/${admin.orgA}`, {
          body: { status: "Closed" },
        });
        assert.equal(status.status, 400);

        await call("POST", "/svc-admin/organizations", {
          body: { name: "globex", displayName: "Globex 50%" },
        });
        const search = await call("GET", "/svc-admin/organizations?search=GLOBEX%20");
        assert.deepEqual([search.json.total, search.json.items[0].name], [1, "globex"]);
        assert.equal((await call("GET", "/svc-admin/organizations?search=50%25")).json.total, 1);
        const dup = await call("POST", "/svc-admin/organizations", {
          body: { name: "globex", displayName: "G" },
        });
        assert.deepEqual([dup.status, dup.json.error.code], [409, "organization_name_taken"]);
      },
    );

    await t.step("domains: the DNS TXT proof verifies; anything less changes nothing", async () => {
      const added = await call("POST", `/svc-admin/organizations/${admin.orgA}/domains`, {
        as: "orgA",
        body: { value: " Acme.Example " },
      });
      assert.equal(added.status, 201, JSON.stringify(added.json));
      assert.equal(added.json.kind, EMAIL_DOMAIN);
      assert.equal(added.json.value, "acme.example");
      assert.equal(added.json.verified, false);
      const record = added.json.verificationRecord;
      assert.equal(record.name, "_svc-verification.acme.example");
      assert.match(record.value, /^svc-domain-verification=[A-Za-z0-9_-]{32}$/);
      const verify = `/svc-admin/organizations/${admin.orgA}/domains/${added.json.id}/verify`;
      const before = await admin.chainLength();

      const missing = await call("POST", verify, { as: "orgA", body: {} });
      assert.deepEqual([missing.status, missing.json.error.code], [409, "domain_verification_failed"]);
      dns = { [record.name]: [["svc-domain-verification=not-the-token"], ["v=spf1 -all"]] };
      assert.equal((await call("POST", verify, { as: "orgA", body: {} })).status, 409);
      dns = { [record.name]: [[record.value.slice(0, 30) + "x"]] };
      assert.equal((await call("POST", verify, { as: "orgA", body: {} })).status, 409);
      assert.equal(await admin.chainLength(), before, "failed proofs append nothing");
      assert.equal(await storage.organizations.findVerifiedDomain(EMAIL_DOMAIN, "acme.example"), null);
      const override = await call("POST", verify, {
        as: "orgA",
        body: { override: true, reason: "trust me" },
      });
      assert.equal(override.status, 403, "the override is the realm administrator's alone");
      assert.equal(
        (await call("POST", verify, { body: { override: true } })).status,
        400,
        "an override needs a reason",
      );

      // A TXT record may come in several character strings.
      dns = { [record.name]: [["v=spf1 -all"], [record.value.slice(0, 10), record.value.slice(10)]] };
      const proven = await call("POST", verify, { as: "orgA", body: {} });
      assert.equal(proven.status, 200, JSON.stringify(proven.json));
      assert.equal(proven.json.verified, true);
      assert.equal(await admin.chainLength(), before + 1);
      assert.equal(
        (await storage.organizations.findVerifiedDomain(EMAIL_DOMAIN, "acme.example"))?.orgId,
        admin.orgA,
      );
      assert.ok(looked.every((name) => name === record.name));
      const event = events.findLast((e) => e.kind === "organization.domain_verified")!;
      assert.deepEqual(event.data, {
        domainId: added.json.id,
        kind: EMAIL_DOMAIN,
        value: "acme.example",
        method: "dns",
      });
      const again = await call("POST", verify, { as: "orgA", body: {} });
      assert.equal(again.status, 200);
      assert.equal(await admin.chainLength(), before + 1, "verifying a verified domain changes nothing");

      // Organization B claims the same domain: it cannot verify it while A holds it, even by override.
      const claim = await call("POST", `/svc-admin/organizations/${admin.orgB}/domains`, {
        as: "orgB",
        body: { value: "acme.example" },
      });
      const claimVerify = `/svc-admin/organizations/${admin.orgB}/domains/${claim.json.id}/verify`;
      const elsewhere = await call("POST", claimVerify, {
        body: { override: true, reason: "support ticket 42" },
      });
      assert.deepEqual([elsewhere.status, elsewhere.json.error.code], [409, "domain_verified_elsewhere"]);

      // The audited override, on a server without a resolver.
      const plain = await call("POST", `/svc-admin/organizations/${admin.orgB}/domains`, {
        body: { value: "b.example" },
      });
      const plainVerify = `/svc-admin/organizations/${admin.orgB}/domains/${plain.json.id}/verify`;
      const noDns = await call("POST", plainVerify, { body: {}, on: admin.app });
      assert.deepEqual([noDns.status, noDns.json.error.code], [409, "domain_verification_unavailable"]);
      const overridden = await call("POST", plainVerify, {
        body: { override: true, reason: "support ticket 42" },
        on: admin.app,
      });
      assert.equal(overridden.status, 200);
      const [entry] = await storage.adminAudit.list(admin.realmId, {
        afterSeq: (await admin.chainLength()) - 1,
      });
      assert.equal(entry.action, "organization.domain.verify");
      assert.deepEqual(entry.after, {
        kind: EMAIL_DOMAIN,
        value: "b.example",
        verified: true,
        method: "override",
        reason: "support ticket 42",
      });
      const list = await call("GET", `/svc-admin/organizations/${admin.orgB}/domains`, { as: "orgB" });
      assert.deepEqual(list.json.items.map((d: { value: string }) => d.value), ["acme.example", "b.example"]);
      const removed = await call(
        "DELETE",
        `/svc-admin/organizations/${admin.orgB}/domains/${plain.json.id}`,
        {
          as: "orgA",
        },
      );
      assert.equal(removed.status, 404, "another organization's domain is invisible");
    });

    await t.step(
      "members: events, eviction, stable pages; leaving the organization leaves its teams",
      async () => {
        const org =
          (await call("POST", "/svc-admin/organizations", { body: { name: "members", displayName: "M" } }))
            .json.id;
        const users = [];
        for (let i = 0; i < 5; i++) users.push(await newUser());
        evicted.length = 0;
        for (const userId of users) {
          const res = await call("POST", `/svc-admin/organizations/${org}/members`, { body: { userId } });
          assert.equal(res.status, 201, JSON.stringify(res.json));
        }
        assert.deepEqual(evicted, users);
        const joined = events.filter((e) => e.kind === "user.org_joined" && e.orgId === org);
        assert.deepEqual(joined.map((e) => e.userId), users);
        const dup = await call("POST", `/svc-admin/organizations/${org}/members`, {
          body: { userId: users[0] },
        });
        assert.deepEqual([dup.status, dup.json.error.code], [409, "org_membership_exists"]);
        const unknown = await call("POST", `/svc-admin/organizations/${org}/members`, {
          body: { userId: crypto.randomUUID() },
        });
        assert.equal(unknown.status, 404);
        const page = await call("GET", `/svc-admin/organizations/${org}/members?offset=2&limit=2`);
        assert.deepEqual(page.json.items.map((m: { userId: string }) => m.userId), users.slice(2, 4));
        assert.deepEqual([page.json.offset, page.json.limit, page.json.total], [2, 2, 5]);
        assert.equal((await call("GET", `/svc-admin/organizations/${org}/members?limit=0`)).status, 400);

        const team =
          (await call("POST", `/svc-admin/organizations/${org}/teams`, { body: { name: "core" } })).json.id;
        assert.equal(
          (await call("POST", `/svc-admin/teams/${team}/members`, { body: { userId: users[0] } })).status,
          201,
        );
        const outsider = await newUser();
        const refused = await call("POST", `/svc-admin/teams/${team}/members`, {
          body: { userId: outsider },
        });
        assert.deepEqual([refused.status, refused.json.error.code], [409, "not_organization_member"]);
        const group =
          (await call("POST", "/svc-admin/groups", { body: { key: "g", displayName: "G", orgId: org } }))
            .json.id;
        assert.equal(
          (await call("POST", `/svc-admin/groups/${group}/members`, { body: { userId: users[0] } })).status,
          201,
        );

        evicted.length = 0;
        const left = await call("DELETE", `/svc-admin/organizations/${org}/members/${users[0]}`);
        assert.equal(left.status, 204);
        assert.deepEqual(evicted, [users[0]]);
        assert.equal(events.findLast((e) => e.kind === "user.org_left")?.userId, users[0]);
        assert.deepEqual(await storage.teams.listMembers(team), []);
        assert.deepEqual(await storage.groups.listMembers(group), []);
        assert.equal(
          (await call("DELETE", `/svc-admin/organizations/${org}/members/${users[0]}`)).status,
          404,
        );

        // An organization admin names only members of their organization.
        const stranger = await call("POST", "/svc-admin/groups", {
          as: "orgA",
          body: { key: "ga", displayName: "GA", orgId: admin.orgA },
        });
        const asOrgA = await call("POST", `/svc-admin/groups/${stranger.json.id}/members`, {
          as: "orgA",
          body: { userId: outsider },
        });
        assert.equal(asOrgA.status, 404);
        assert.equal(
          (await call("POST", "/svc-admin/groups", { as: "orgA", body: { key: "r", displayName: "R" } }))
            .status,
          404,
          "realm-level groups are the realm administrator's",
        );
        assert.equal((await call("GET", "/svc-admin/groups", { as: "orgA" })).status, 404);
        assert.equal((await call("GET", "/svc-admin/groups")).json.total >= 2, true);
        // Searched by key or display name, case-insensitive (the console's group picker).
        const byName = await call("GET", `/svc-admin/groups?search=${encodeURIComponent("gA")}`);
        assert.deepEqual(byName.json.items.map((g: { key: string }) => g.key), ["ga"]);
        assert.equal(byName.json.total, 1);
        const inOrg = await call("GET", `/svc-admin/groups?orgId=${admin.orgA}&search=G`, { as: "orgA" });
        assert.deepEqual(inOrg.json.items.map((g: { key: string }) => g.key), ["ga"]);
        assert.equal((await call("GET", "/svc-admin/groups?search=no-such-group")).json.total, 0);
        assert.equal((await call("GET", `/svc-admin/groups?search=${"x".repeat(201)}`)).status, 400);
        assert.equal((await call("GET", "/svc-admin/groups?search=a%00b")).status, 400);
      },
    );

    await t.step(
      "deleting an organization removes what is scoped to it in one change and evicts snapshots",
      async () => {
        const org =
          (await call("POST", "/svc-admin/organizations", { body: { name: "doomed", displayName: "D" } }))
            .json.id;
        const user = await newUser();
        await call("POST", `/svc-admin/organizations/${org}/members`, { body: { userId: user } });
        const team =
          (await call("POST", `/svc-admin/organizations/${org}/teams`, { body: { name: "t" } })).json.id;
        await call("POST", `/svc-admin/teams/${team}/members`, { body: { userId: user } });
        await call("POST", `/svc-admin/organizations/${org}/domains`, { body: { value: "doomed.example" } });
        const before = await admin.chainLength();
        const all = evictedAll;
        assert.equal((await call("DELETE", `/svc-admin/organizations/${org}`)).status, 204);
        assert.equal(await admin.chainLength(), before + 1);
        assert.equal(evictedAll, all + 1);
        assert.equal(await storage.organizations.get(org), null);
        assert.equal(await storage.teams.get(team), null);
        assert.notEqual(await storage.users.get(user), null, "users stay");
        assert.equal((await call("DELETE", `/svc-admin/organizations/${org}`)).status, 404);
      },
    );
  } finally {
    await admin.close();
  }
});
