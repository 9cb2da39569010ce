/**
 * Admin audit and invitations against the real server (`svc start` on a fresh Postgres
 * database), over HTTP:
 *
 * - the default realm's and the bootstrap administrator's creation are in the chain from the first
 *   start (actor kind `System`, actors `svc:definitions` and `svc:bootstrap`);
 * - an invitation appends one entry naming the inviting administrator, and the chain verifies;
 * - an organization admin's invitation answers alike for a new address and for accounts of other
 *   organizations (with and without a password), and adds nobody to the organization.
 *
 * Organizations and the organization admin's role have no admin route yet: they are seeded in the
 * server's database; everything else goes through the server.
 */
import { strict as assert } from "node:assert";
import { sql } from "kysely";
import { BOOTSTRAP_ACTOR_ID } from "../../core/accounts/bootstrap.ts";
import { USERS_INVITE_ORG } from "../../core/definitions/svc-permissions.ts";
import { DEFINITIONS_ACTOR_ID } from "../../core/definitions/sync.ts";
import { openDatabase } from "../../storage/open.ts";
import { seeder } from "../support/seed.ts";
import { httpClient, startTestServer } from "../support/server.ts";

interface Entry {
  seq: number;
  action: string;
  actorId: string;
  actorKind: string;
  onBehalfOf: string | null;
  target: string | null;
  orgId: string | null;
}

Deno.test("e2e: admin audit chain and invitations on the real server", async (t) => {
  const server = await startTestServer();
  const database = await openDatabase({ kind: "postgres", url: server.databaseUrl, maxConnections: 2 });
  const { call, signIn } = httpClient(server.url);
  const mailedToken = async (to: string) => {
    const row = await database.db.selectFrom("mail_outbox").select("text_body").where("recipient", "=", to)
      .where("kind", "=", "invitation").orderBy("seq", "desc").limit(1).executeTakeFirstOrThrow();
    return decodeURIComponent(/[?&]token=([^\s"&<]+)/.exec(row.text_body)![1]);
  };
  const isMember = async (orgId: string, email: string) =>
    (await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM org_memberships m JOIN users u ON u.id = m.user_id
      WHERE m.org_id = ${orgId} AND u.email = ${email}`.execute(database.db)).rows[0].n === 1;

  try {
    const root = await signIn(server.adminEmail, server.adminPassword);
    const entries = async (afterSeq = 0): Promise<Entry[]> => {
      const res = await call("GET", `/svc-admin/audit/entries?afterSeq=${afterSeq}&limit=1000`, root);
      assert.equal(res.status, 200);
      return res.json.entries;
    };
    const verify = async () => {
      const res = await call("GET", "/svc-admin/audit/verify", root);
      assert.equal(res.status, 200);
      assert.equal(res.json.valid, true, JSON.stringify(res.json));
      return res.json.checked as number;
    };
    let rootId = "";

    await t.step("the bootstrap administrator is in the chain from the first start", async () => {
      const first = await entries();
      assert.deepEqual(first.map((e) => e.action), [
        "realm.create",
        "role.create",
        "user.create",
        "role.assign",
        "user.password.set",
      ]);
      // Definition sync created the default realm; the bootstrap made the administrator.
      assert.deepEqual([first[0].actorKind, first[0].actorId], ["System", DEFINITIONS_ACTOR_ID]);
      for (const e of first.slice(1)) {
        assert.deepEqual([e.actorKind, e.actorId], ["System", BOOTSTRAP_ACTOR_ID]);
      }
      rootId = first[2].target!;
      assert.equal(await verify(), 5);
    });

    const realm = (await database.db.selectFrom("realms").select("id").where("is_default", "=", true)
      .executeTakeFirstOrThrow()).id;
    const seed = seeder(database.db);
    const orgA = await seed.org(realm);
    const orgB = await seed.org(realm);
    const invite = (token: string, body: unknown) => call("POST", "/svc-admin/users/invite", token, body);

    await t.step("an invitation appends one entry naming the administrator; the chain verifies", async () => {
      const before = (await entries()).length;
      const res = await invite(root, { email: "anna@example.test", orgId: orgA });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      const added = await entries(before);
      assert.equal(added.length, 1);
      assert.deepEqual(
        {
          action: added[0].action,
          actorKind: added[0].actorKind,
          actorId: added[0].actorId,
          orgId: added[0].orgId,
        },
        { action: "user.invite", actorKind: "User", actorId: rootId, orgId: orgA },
      );
      assert.equal(await verify(), before + 1);
      assert.equal(await isMember(orgA, "anna@example.test"), false, "not before accepting");
      const accepted = await call("POST", "/auth/invitation/accept", undefined, {
        token: await mailedToken("anna@example.test"),
        password: "anna's password",
      });
      assert.equal(accepted.status, 200, JSON.stringify(accepted.json));
      assert.equal(await isMember(orgA, "anna@example.test"), true, "accepting joins");
    });

    await t.step("an org admin's invitation does not tell other organizations' accounts apart", async () => {
      // Bob (a password) joined B by accepting; Pat (no password yet) is a member of B.
      assert.equal((await invite(root, { email: "bob@example.test", orgId: orgB })).status, 201);
      const bob = await call("POST", "/auth/invitation/accept", undefined, {
        token: await mailedToken("bob@example.test"),
        password: "bob's password",
      });
      assert.equal(bob.status, 200);
      const pat = await invite(root, { email: "pat@example.test" });
      assert.equal(pat.status, 201);
      await database.db.insertInto("org_memberships")
        .values({ org_id: orgB, user_id: pat.json.userId, created_at: new Date() }).execute();
      // Anna administers invitations of A only.
      const anna =
        (await database.db.selectFrom("users").select("id").where("email", "=", "anna@example.test")
          .executeTakeFirstOrThrow()).id;
      const role = await seed.role(realm, "a-inviters", [{ pattern: USERS_INVITE_ORG }], orgA);
      await seed.assign(realm, role, { kind: "User", id: anna }, orgA);
      const annaToken = await signIn("anna@example.test", "anna's password", orgA);

      const answers = [];
      for (const email of ["new@example.test", "bob@example.test", "pat@example.test"]) {
        const res = await invite(annaToken, { email, orgId: orgA });
        assert.equal(res.status, 201, `${email}: ${JSON.stringify(res.json)}`);
        answers.push({
          keys: Object.keys(res.json).sort(),
          orgId: res.json.orgId,
          // The real clock runs: the same lifetime, give or take the second the calls straddle.
          expiresIn: Math.round((Date.parse(res.json.expiresAt) - Date.now()) / 10_000),
        });
      }
      assert.deepEqual(answers[1], answers[0]);
      assert.deepEqual(answers[2], answers[0]);
      for (const email of ["bob@example.test", "pat@example.test", "new@example.test"]) {
        assert.equal(await isMember(orgA, email), false, `${email} joined A without accepting`);
      }
      assert.equal(await isMember(orgB, "bob@example.test"), true);
      const last = (await entries()).slice(-3);
      assert.ok(last.every((e) => e.action === "user.invite" && e.actorId === anna && e.orgId === orgA));
      // Another organization is invisible to Anna: 404, as everywhere in the admin API.
      assert.equal((await invite(annaToken, { email: "x@example.test", orgId: orgB })).status, 404);
      await verify();
    });
  } finally {
    await database.close();
    await server.close();
  }
});
