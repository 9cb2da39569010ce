/**
 * The SAML maintenance job (`plugins/saml/maintenance.ts`), driven by the injected clock (the
 * job's background loop is off; the test runs its batches):
 *
 * - a certificate entering its last 30 days raises `saml.certificate_expiring` once (not at
 *   creation, while it is farther; not on later scans), shown by the API as `expiryAnnouncedAt`;
 * - metadata by URL is fetched again once `SVC_SAML_METADATA_REFRESH_SECONDS` have passed:
 *   unchanged metadata writes no audit entry; a rollover (a second certificate) is stored with
 *   one entry (`saml.connection.metadata_refresh`, actor `System`) and both certificates are kept;
 *   a failed fetch and metadata naming another entity id keep the certificates, are recorded in
 *   `metadataRefresh` and are retried within the hour; the setting's bounds are enforced;
 * - on real Postgres, several instances scanning at once raise one event per certificate and
 *   write one audit entry per change.
 */
import { strict as assert } from "node:assert";
import { loadPluginConfig } from "../../../plugins/host.ts";
import { samlPlugin } from "../../../plugins/saml/mod.ts";
import { type PluginBed, pluginBed } from "../../support/plugins.ts";
import { seeder } from "../../support/seed.ts";
import { fixture, testIdp } from "./idp.ts";

const BASE = "/svc-admin/saml/connections";
const DAY = 24 * 3600_000;
const HOUR = 3600_000;

/** A realm-wide SAML administrator and an organization, on a bed. */
async function setUp(plugged: PluginBed) {
  const { bed } = plugged.admin;
  const realmId = bed.realmId;
  const seed = seeder(bed.database.db);
  const admin = await seed.user(realmId);
  const role = await seed.role(realmId, "saml-admin", [{ pattern: "saml:global:*" }]);
  await seed.assign(realmId, role, { kind: "User", id: admin });
  const orgId = await seed.org(realmId, []);
  await bed.snapshots.invalidateAll();
  const token = async () =>
    (await bed.auth.sessions.signIn({ realmId, userId: admin, orgId: null, mfa: "MultiFactor" })).tokens
      .accessToken;
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await plugged.app.request(path, {
      method,
      headers: {
        Authorization: `Bearer ${await token()}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text === "" ? null : JSON.parse(text) };
  };
  const audit = async () =>
    (await bed.storage.adminAudit.list(realmId)).filter((e) =>
      e.action === "saml.connection.metadata_refresh"
    );
  const expiring = () => bed.events.filter((e) => e.kind === "saml.certificate_expiring");
  return { bed, orgId, request, audit, expiring };
}

const soonIdp = () => testIdp("https://soon.example.test", fixture("soon"));

/** The metadata of `idp` with the certificate of `extra` announced next to its own. */
function withSecondCertificate(metadata: string): string {
  const next = testIdp("x", fixture("idp2")).metadata();
  const cert = /<ds:X509Certificate>([^<]+)</.exec(next)![1];
  return metadata.replace(
    "</KeyDescriptor>",
    `</KeyDescriptor><KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></KeyDescriptor>`,
  );
}

Deno.test("SVC_SAML_METADATA_REFRESH_SECONDS: default one day, bounded to 300..604800", async () => {
  const plugged = await pluginBed([samlPlugin({ maintenanceWorker: false })]);
  try {
    const plugin = samlPlugin();
    const config = plugged.admin.bed.config;
    const load = (value?: string) =>
      loadPluginConfig(
        plugin,
        config,
        value === undefined ? {} : { SVC_SAML_METADATA_REFRESH_SECONDS: value },
      );
    assert.equal((load() as { metadataRefreshSeconds: number }).metadataRefreshSeconds, 86400);
    assert.equal((load("300") as { metadataRefreshSeconds: number }).metadataRefreshSeconds, 300);
    for (const bad of ["299", "604801", "1h", "-5"]) {
      assert.throws(() => load(bad), /SVC_SAML_METADATA_REFRESH_SECONDS/, bad);
    }
  } finally {
    await plugged.close();
  }
});

Deno.test("saml maintenance: a certificate entering its last 30 days is announced once", async () => {
  const plugin = samlPlugin({ maintenanceWorker: false });
  const plugged = await pluginBed([plugin]);
  try {
    const { bed, orgId, request, expiring } = await setUp(plugged);
    const job = plugin.maintenance()!;
    // Learn the certificate's end, then create the connection 60 days before it.
    const probe = await request("POST", BASE, {
      orgId,
      displayName: "probe",
      idpMetadataXml: soonIdp().metadata(),
    });
    assert.equal(probe.status, 201, JSON.stringify(probe.body));
    const notAfter = Date.parse(probe.body.certificates[0].notAfter);
    assert.equal((await request("DELETE", `${BASE}/${probe.body.id}`)).status, 204);
    bed.clock.set(notAfter - 60 * DAY);
    bed.events.length = 0;
    const created = await request("POST", BASE, {
      orgId,
      displayName: "Soon",
      idpMetadataXml: soonIdp().metadata(),
    });
    assert.equal(created.status, 201);
    const id = created.body.id as string;
    assert.equal(created.body.certificates[0].expiresSoon, false);
    assert.equal(created.body.certificates[0].expiryAnnouncedAt, null);
    const first = await job.drain();
    assert.deepEqual(first.find((o) => o.connectionId === id)?.announced, []);
    assert.equal(expiring().length, 0);

    // Not due again within the hour.
    bed.clock.advance(30 * 60_000);
    assert.equal((await job.drain()).length, 0);

    // 29 days before the end: the next check announces it, once.
    bed.clock.set(notAfter - 29 * DAY);
    const second = await job.drain();
    const sha256 = created.body.certificates[0].sha256;
    assert.deepEqual(second.find((o) => o.connectionId === id)?.announced, [sha256]);
    assert.equal(expiring().length, 1);
    assert.deepEqual(expiring()[0].data, {
      connectionId: id,
      sha256,
      notAfter: new Date(notAfter).toISOString(),
    });
    for (let i = 0; i < 5; i++) {
      bed.clock.advance(2 * HOUR);
      const later = await job.drain();
      assert.equal(later.length, 1, "each connection is checked again after an hour");
      assert.deepEqual(later[0].announced, []);
    }
    assert.equal(expiring().length, 1, "announced once");
    const read = await request("GET", `${BASE}/${id}`);
    assert.equal(read.body.certificates[0].expiresSoon, true);
    assert.equal(read.body.certificates[0].expiryAnnouncedAt, new Date(notAfter - 29 * DAY).toISOString());
    // An administrator storing the same certificate again announces nothing more.
    const same = await request("PATCH", `${BASE}/${id}`, {
      idpMetadataXml: withSecondCertificate(soonIdp().metadata()),
    });
    assert.equal(same.status, 200);
    assert.equal(expiring().length, 1);
    // A deleted connection is no longer checked.
    assert.equal((await request("DELETE", `${BASE}/${id}`)).status, 204);
    bed.clock.advance(2 * HOUR);
    assert.deepEqual((await job.drain()).filter((o) => o.connectionId === id), []);
  } finally {
    await plugged.close();
  }
});

Deno.test("saml maintenance: metadata by URL is refreshed; rollover, failures, one audit entry per change", async () => {
  const plugin = samlPlugin({ maintenanceWorker: false });
  const plugged = await pluginBed([plugin], {
    SVC_OUTBOUND_ALLOW_PRIVATE: "127.0.0.2",
    SVC_SAML_METADATA_REFRESH_SECONDS: "43200",
  });
  const idp = testIdp();
  let answer: () => Response = () => new Response(idp.metadata());
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.2", port: 0, onListen() {} }, () => {
    hits++;
    return answer();
  });
  try {
    const { bed, orgId, request, audit } = await setUp(plugged);
    const job = plugin.maintenance()!;
    const url = `http://127.0.0.2:${server.addr.port}/metadata`;
    const created = await request("POST", BASE, { orgId, displayName: "By URL", idpMetadataUrl: url });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    assert.equal(created.body.metadataRefresh, null);
    const read = async () => (await request("GET", `${BASE}/${id}`)).body;
    const outcome = async () => (await job.drain()).find((o) => o.connectionId === id)?.refresh ?? null;

    // Fetched at creation: not due before 12 hours.
    assert.equal(await outcome(), null);
    bed.clock.advance(11 * HOUR);
    assert.equal(await outcome(), null);
    assert.equal(hits, 1);

    // Unchanged metadata: recorded, no audit entry.
    bed.clock.advance(HOUR + 1000);
    assert.equal(await outcome(), "unchanged");
    assert.equal(hits, 2);
    assert.equal((await audit()).length, 0);
    let now = await read();
    assert.equal(now.metadataRefresh.outcome, "unchanged");
    assert.equal(now.metadataRefresh.attemptedAt, new Date(bed.clock.now()).toISOString());
    assert.equal(now.metadataRefresh.error, null);

    // The IdP announces its next certificate: both are accepted, one audit entry.
    const rolled = withSecondCertificate(idp.metadata());
    answer = () => new Response(rolled);
    bed.clock.advance(12 * HOUR);
    assert.equal(await outcome(), "updated");
    const entries = await audit();
    assert.equal(entries.length, 1);
    assert.equal(entries[0].actorKind, "System");
    assert.equal(entries[0].actorId, "saml:metadata-refresh");
    assert.equal(entries[0].target, id);
    now = await read();
    assert.equal(now.certificates.length, 2);
    assert.equal(now.metadataRefresh.outcome, "updated");
    const refreshedAt = now.metadataRefresh.succeededAt;

    // The IdP answers 500: the certificates stay, the failure is recorded and retried in an hour.
    answer = () => new Response("down", { status: 500 });
    bed.clock.advance(12 * HOUR);
    assert.equal(await outcome(), "failed");
    now = await read();
    assert.equal(now.certificates.length, 2);
    assert.equal(now.metadataRefresh.outcome, "failed");
    assert.match(now.metadataRefresh.error, /^saml_metadata_unavailable/);
    assert.equal(now.metadataRefresh.succeededAt, refreshedAt);
    bed.clock.advance(HOUR + 1000);
    assert.equal(await outcome(), "failed");

    // Metadata of another entity: refused, nothing changes.
    answer = () => new Response(testIdp("https://another.example.test", fixture("other")).metadata());
    bed.clock.advance(HOUR + 1000);
    assert.equal(await outcome(), "failed");
    now = await read();
    assert.match(now.metadataRefresh.error, /another entity id/);
    assert.equal(now.certificates.length, 2);
    assert.equal((await audit()).length, 1);

    // After the rollover the IdP lists only the new certificate: the old one is no longer accepted.
    const onlyNew = testIdp(idp.entityId, fixture("idp2")).metadata();
    answer = () => new Response(onlyNew);
    bed.clock.advance(HOUR + 1000);
    assert.equal(await outcome(), "updated");
    now = await read();
    assert.equal(now.certificates.length, 1);
    assert.equal(now.metadataRefresh.outcome, "updated");
    assert.equal((await audit()).length, 2);
    // And the same again changes nothing.
    bed.clock.advance(12 * HOUR + 1000);
    assert.equal(await outcome(), "unchanged");
    assert.equal((await audit()).length, 2);
    const report = await bed.storage.adminAudit.verify(bed.realmId);
    assert.equal(report.valid, true);
  } finally {
    await server.shutdown();
    await plugged.close();
  }
});

Deno.test("saml maintenance: instances scanning at once raise one event per certificate (Postgres)", async () => {
  // One connection per claim, so that the instances interleave.
  const options = { maintenanceWorker: false, maintenance: { batchSize: 1 } };
  const plugin = samlPlugin(options);
  const plugged = await pluginBed([plugin], { SVC_OUTBOUND_ALLOW_PRIVATE: "127.0.0.2" }, { postgres: true });
  const idp = testIdp();
  let metadata = idp.metadata();
  const server = Deno.serve(
    { hostname: "127.0.0.2", port: 0, onListen() {} },
    () => new Response(metadata),
  );
  try {
    const { bed, orgId, request, audit, expiring } = await setUp(plugged);
    const probe = await request("POST", BASE, {
      orgId,
      displayName: "probe",
      idpMetadataXml: soonIdp().metadata(),
    });
    const notAfter = Date.parse(probe.body.certificates[0].notAfter);
    assert.equal((await request("DELETE", `${BASE}/${probe.body.id}`)).status, 204);
    bed.clock.set(notAfter - 60 * DAY);
    const soonIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await request("POST", BASE, {
        orgId,
        displayName: `Soon ${i}`,
        idpMetadataXml: soonIdp().metadata(),
      });
      assert.equal(res.status, 201);
      soonIds.push(res.body.id);
    }
    const byUrl = await request("POST", BASE, {
      orgId,
      displayName: "By URL",
      idpMetadataUrl: `http://127.0.0.2:${server.addr.port}/metadata`,
    });
    assert.equal(byUrl.status, 201);
    // Four more instances of the plugin on the same database, each with its own job.
    const instances = [plugin];
    for (let i = 0; i < 4; i++) {
      const other = samlPlugin(options);
      await other.start!(plugged.contexts[0] as never);
      instances.push(other);
    }
    const jobs = instances.map((p) => p.maintenance()!);
    bed.events.length = 0;
    bed.clock.set(notAfter - 20 * DAY);
    metadata = withSecondCertificate(idp.metadata());
    const outcomes = (await Promise.all(jobs.map((job) => job.drain()))).flat();
    // Each connection was checked by exactly one instance.
    const checked = outcomes.map((o) => o.connectionId).sort();
    assert.deepEqual(checked, [...soonIds, byUrl.body.id].sort());
    assert.equal(expiring().length, soonIds.length, "one event per certificate and connection");
    assert.deepEqual(new Set(expiring().map((e) => e.data.connectionId)), new Set(soonIds));
    assert.equal((await audit()).length, 1, "one audit entry for the rollover");
    // The same race an hour later finds nothing new to announce or change.
    bed.clock.advance(HOUR + 1000);
    const again = (await Promise.all(jobs.map((job) => job.drain()))).flat();
    assert.equal(again.length, soonIds.length + 1);
    assert.equal(expiring().length, soonIds.length);
    assert.equal((await audit()).length, 1);
    for (const other of instances.slice(1)) await other.stop?.();
  } finally {
    await server.shutdown();
    await plugged.close();
  }
});
