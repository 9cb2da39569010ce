/**
 * Explain a decision (`POST /svc-admin/authz/inspect`): for a user, a permission and a
 * resource, the decision and each grant's verdict (`PatternMismatch`, `ScopeNotApplicable`,
 * `ConditionFailed`, `Allowed`, `Denied`).
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api } from "../api.ts";
import { Empty, Field, FormError, Page, Submit, Table, useForm } from "../ui.tsx";
import { jsonField } from "./common.ts";
import { Picker, resolvePick } from "../picker.tsx";

const OUTCOME_HELP: Record<string, string> = {
  PatternMismatch: "the pattern does not match the permission",
  ScopeNotApplicable: "the grant's organization or teams do not apply to this resource",
  ConditionFailed: "the condition is false for these attributes",
  Allowed: "this grant allows",
  Denied: "this grant denies",
};

/** The explain page. */
export function Explain() {
  const [result, setResult] = useState<any>(null);
  const form = useForm(async (values) => {
    setResult(null);
    const check: Record<string, unknown> = { permission: values.permission };
    if (values.resourceOrg) {
      check.resourceOrgId = await resolvePick("Organization", values.resourceOrg, "resourceOrg");
    }
    if (values.resourceOwner) {
      check.resourceOwnerId = await resolvePick("User", values.resourceOwner, "resourceOwner");
    }
    const teams = (values.resourceTeamIds ?? "").split(",").map((t) => t.trim()).filter(Boolean);
    if (teams.length > 0) check.resourceTeamIds = teams;
    const attributes = jsonField(values.resourceAttributes, "check.resourceAttributes");
    if (attributes !== undefined) check.resourceAttributes = attributes;
    const context = jsonField(values.context, "check.context");
    if (context !== undefined) check.context = context;
    const body: Record<string, unknown> = { userId: await resolvePick("User", values.user, "user"), check };
    if (values.org) body.orgId = await resolvePick("Organization", values.org, "org");
    setResult(await api("POST", "/svc-admin/authz/inspect", body));
  });
  const f = form.fields;
  return (
    <Page title="Explain a decision">
      <form onSubmit={form.onSubmit} class="card" aria-label="Decision to explain">
        <div class="columns">
          <div>
            <Picker
              kind="User"
              label="User (email or name)"
              name="user"
              required
              error={f.user ?? f.userId}
            />
            <Field
              label="Permission"
              name="permission"
              required
              placeholder="docs:org:read"
              error={f["check.permission"]}
            />
            <Picker
              kind="Organization"
              label="Acting in organization (optional)"
              name="org"
              error={f.org ?? f.orgId}
            />
          </div>
          <div>
            <Picker
              kind="Organization"
              label="Resource organization"
              name="resourceOrg"
              error={f.resourceOrg ?? f["check.resourceOrgId"]}
            />
            <Picker
              kind="User"
              label="Resource owner (email or name)"
              name="resourceOwner"
              error={f.resourceOwner ?? f["check.resourceOwnerId"]}
            />
            <Field
              label="Resource team IDs (comma-separated)"
              name="resourceTeamIds"
              error={f["check.resourceTeamIds"]}
            />
          </div>
        </div>
        <div class="columns">
          <Field
            label="Resource attributes (JSON)"
            name="resourceAttributes"
            multiline
            rows={3}
            placeholder='{"classification": "public"}'
            error={f["check.resourceAttributes"]}
          />
          <Field label="Context (JSON)" name="context" multiline rows={3} error={f["check.context"]} />
        </div>
        <FormError form={form} />
        <Submit form={form}>Explain</Submit>
      </form>
      {result
        ? (
          <section class="card" aria-labelledby="verdict-h" aria-live="polite">
            <h2 id="verdict-h">
              Decision:{" "}
              <span class={result.decision === "Allowed" ? "ok" : "bad"} data-decision>
                {result.decision}
              </span>
            </h2>
            <p>
              <code>{result.permission}</code> for user <code>{result.userId}</code>
              {result.orgId
                ? (
                  <>
                    in organization <code>{result.orgId}</code>
                  </>
                )
                : null}; snapshot built {new Date(result.snapshot.builtAt).toLocaleString()}.
            </p>
            {result.grants.length === 0 ? <Empty>The user holds no grant.</Empty> : (
              <Table
                columns={["Grant", "Effect", "From", "Condition", "Verdict"]}
                rows={result.grants as any[]}
                row={(g) => (
                  <>
                    <td>
                      <code>{g.pattern}</code>
                    </td>
                    <td>{g.effect}</td>
                    <td>{g.source}{g.orgId ? ` (org ${g.orgId.slice(0, 8)})` : ""}</td>
                    <td>{g.condition ? <pre class="json">{JSON.stringify(g.condition)}</pre> : "—"}</td>
                    <td data-outcome={g.outcome}>
                      <strong>{g.outcome}</strong>
                      <br />
                      <small>{OUTCOME_HELP[g.outcome] ?? ""}</small>
                    </td>
                  </>
                )}
              />
            )}
            {result.skippedGrants.length > 0
              ? (
                <>
                  <h3>Skipped grants</h3>
                  <ul class="plain">
                    {(result.skippedGrants as any[]).map((s) => (
                      <li>
                        <code>{s.pattern}</code> ({s.source}): {s.message}
                      </li>
                    ))}
                  </ul>
                </>
              )
              : null}
          </section>
        )
        : null}
    </Page>
  );
}
