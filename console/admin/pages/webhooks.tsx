/**
 * Webhooks: endpoints (create with the signing secret shown once), an endpoint's test
 * delivery, secret rotation (shown once), delivery log with a status filter and dead-letter
 * replay.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api, query } from "../api.ts";
import { href, navigate } from "../router.ts";
import { useSession } from "../session.ts";
import {
  ConfirmButton,
  Empty,
  Field,
  FormError,
  Page,
  SecretOnce,
  Show,
  Submit,
  Table,
  useForm,
  useLoad,
  When,
} from "../ui.tsx";

const MOUNT = "/svc-admin/webhooks";

/** The webhooks page. */
export function Webhooks() {
  const session = useSession();
  const loaded = useLoad(() => api("GET", MOUNT), "webhooks");
  const [created, setCreated] = useState<any>(null);
  const form = useForm(async (values, el) => {
    const patterns = (values.eventPatterns ?? "").split(",").map((p) => p.trim()).filter(Boolean);
    const body: Record<string, unknown> = { url: values.url, eventPatterns: patterns };
    if (values.description) body.description = values.description;
    if (!session.isGlobal("webhooks-manage") && session.profile.orgId) body.orgId = session.profile.orgId;
    setCreated(await api("POST", MOUNT, body));
    el.reset();
    loaded.reload();
  });
  return (
    <Page title="Webhooks">
      {created
        ? (
          <div class="card">
            <p>
              Endpoint created: <a href={href(`/webhooks/${created.id}`)}>{created.url}</a>
            </p>
            <SecretOnce label="Signing secret" value={created.secret} />
          </div>
        )
        : null}
      <Show loaded={loaded}>
        {(d) =>
          d.endpoints.length === 0 ? <Empty>No webhook endpoint.</Empty> : (
            <Table
              columns={["URL", "Events", "State", "Failed deliveries in a row"]}
              rows={d.endpoints as any[]}
              row={(e) => (
                <>
                  <td>
                    <a href={href(`/webhooks/${e.id}`)}>{e.url}</a>
                  </td>
                  <td>{e.eventPatterns.join(", ")}</td>
                  <td>{e.enabled ? "enabled" : "disabled"}</td>
                  <td>{e.consecutiveFailures}</td>
                </>
              )}
            />
          )}
      </Show>
      {session.canAny("webhooks-manage")
        ? (
          <form onSubmit={form.onSubmit} class="card" aria-labelledby="create-wh-h">
            <h2 id="create-wh-h">Create an endpoint</h2>
            <Field
              label="URL"
              name="url"
              type="url"
              required
              placeholder="https://example.com/hook"
              error={form.fields.url}
            />
            <Field
              label="Event patterns (comma-separated)"
              name="eventPatterns"
              required
              value="*"
              hint="For example user.* or *"
              error={form.fields.eventPatterns ?? form.fields["eventPatterns.0"]}
            />
            <Field label="Description" name="description" error={form.fields.description} />
            <FormError form={form} />
            <Submit form={form}>Create endpoint</Submit>
          </form>
        )
        : null}
    </Page>
  );
}

/**
 * A delivery's state for people: the spec's state names, and "paused" for a delivery still due
 * (pending or retrying) while its endpoint is disabled — it is not sent until the endpoint is
 * enabled again, then it resumes where it was.
 */
function deliveryState(status: string, endpointEnabled: boolean): string {
  if (!endpointEnabled && (status === "pending" || status === "retrying")) {
    return `${status} · paused (endpoint disabled)`;
  }
  return status === "dead_letter" ? "dead-letter" : status;
}

/** The last answer of a delivery: the receiver's status and the recorded reason. */
function lastAnswer(x: { lastStatusCode: number | null; lastError: string | null }): string {
  if (x.lastError) return x.lastError;
  if (x.lastStatusCode !== null) return `receiver answered ${x.lastStatusCode}`;
  return "";
}

function Deliveries(props: { endpointId: string; canManage: boolean; tick: number; enabled: boolean }) {
  const [status, setStatus] = useState("");
  const loaded = useLoad(
    () => api("GET", `${MOUNT}/${props.endpointId}/deliveries${query({ status, limit: 50 })}`),
    `${props.endpointId}:${status}:${props.tick}`,
  );
  return (
    <section class="card" aria-labelledby="deliveries-h">
      <h2 id="deliveries-h">Delivery log</h2>
      <div class="toolbar">
        <Field
          label="Status"
          name="status"
          value={status}
          options={[["", "Any"], "pending", "retrying", "succeeded", ["dead_letter", "dead-letter"]]}
          onInput={setStatus}
        />
        <button type="button" onClick={loaded.reload}>Refresh</button>
      </div>
      <Show loaded={loaded}>
        {(d) =>
          d.deliveries.length === 0 ? <Empty>No delivery.</Empty> : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">Created</th>
                  <th scope="col">Next attempt</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {(d.deliveries as any[]).map((x) => (
                  <tr data-delivery={x.eventKind}>
                    <td>
                      <code>{x.eventKind}</code>
                    </td>
                    <td>{deliveryState(x.status, props.enabled)}</td>
                    <td>{x.attempts}</td>
                    <td>{lastAnswer(x)}</td>
                    <td>
                      <When at={x.createdAt} />
                    </td>
                    <td>
                      {x.status === "pending" || x.status === "retrying"
                        ? props.enabled ? <When at={x.nextAttemptAt} /> : "when re-enabled"
                        : <span class="muted">—</span>}
                    </td>
                    <td>
                      {props.canManage && x.status === "dead_letter"
                        ? (
                          <button
                            type="button"
                            onClick={async () => {
                              await api("POST", `${MOUNT}/${props.endpointId}/deliveries/${x.id}/replay`, {});
                              loaded.reload();
                            }}
                          >
                            Replay
                          </button>
                        )
                        : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </Show>
    </section>
  );
}

/** An endpoint's page. */
export function WebhookDetail(props: { id: string }) {
  const session = useSession();
  const canManage = session.canAny("webhooks-manage");
  const loaded = useLoad(() => api("GET", `${MOUNT}/${props.id}`), props.id);
  const [secret, setSecret] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<string | null>(null);
  return (
    <Page title="Webhook endpoint">
      <p>
        <a href={href("/webhooks")}>← Webhooks</a>
      </p>
      <Show loaded={loaded}>
        {(e) => (
          <>
            <h2 class="subject">{e.url}</h2>
            <dl class="facts">
              <dt>Events</dt>
              <dd>{e.eventPatterns.join(", ")}</dd>
              <dt>State</dt>
              <dd data-state={e.enabled ? "enabled" : "disabled"}>
                {e.enabled ? "enabled" : (
                  <>
                    disabled since <When at={e.disabledAt} />
                  </>
                )}
              </dd>
              <dt>Created</dt>
              <dd>
                <When at={e.createdAt} />
              </dd>
              <dt>Consecutive failures</dt>
              <dd>{e.consecutiveFailures}</dd>
              <dt>Previous secret valid until</dt>
              <dd>
                <When at={e.previousSecretExpiresAt} />
              </dd>
            </dl>
            {canManage
              ? (
                <div class="actions">
                  {e.enabled
                    ? (
                      <ConfirmButton
                        label="Disable"
                        title="Disable this endpoint?"
                        message="Nothing is sent to it until it is enabled again; its due deliveries wait."
                        onConfirm={async () => {
                          await api("PATCH", `${MOUNT}/${e.id}`, { enabled: false });
                          setNote("The endpoint is disabled.");
                          loaded.reload();
                          setTick(tick + 1);
                        }}
                      />
                    )
                    : (
                      <button
                        type="button"
                        class="primary"
                        onClick={async () => {
                          await api("PATCH", `${MOUNT}/${e.id}`, { enabled: true });
                          setNote("The endpoint is enabled again; its waiting deliveries resume.");
                          loaded.reload();
                          setTick(tick + 1);
                        }}
                      >
                        Re-enable
                      </button>
                    )}
                  <button
                    type="button"
                    onClick={async () => {
                      await api("POST", `${MOUNT}/${e.id}/test`, {});
                      setNote("A signed test delivery is queued.");
                      setTick(tick + 1);
                    }}
                  >
                    Send a test event
                  </button>
                  <ConfirmButton
                    label="Rotate secret"
                    title="Rotate the signing secret?"
                    message="The previous secret keeps signing (a second signature) during the overlap."
                    onConfirm={async () => {
                      setSecret((await api("POST", `${MOUNT}/${e.id}/rotate-secret`, {})).secret);
                      loaded.reload();
                    }}
                  />
                  <ConfirmButton
                    label="Delete"
                    title="Delete this endpoint?"
                    message="No more deliveries go to it."
                    onConfirm={async () => {
                      await api("DELETE", `${MOUNT}/${e.id}`);
                      navigate("/webhooks");
                    }}
                  />
                </div>
              )
              : null}
            {note ? <p role="status" class="ok">{note}</p> : null}
            {secret ? <SecretOnce label="New signing secret" value={secret} /> : null}
            <Deliveries endpointId={e.id} canManage={canManage} tick={tick} enabled={e.enabled} />
          </>
        )}
      </Show>
    </Page>
  );
}
