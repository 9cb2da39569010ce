/**
 * Audit: the realm's admin audit chain, entries with their before/after difference, and
 * chain verification with its result.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api, query } from "../api.ts";
import { Empty, ErrorNote, Page, Show, useLoad, When } from "../ui.tsx";

const PAGE = 25;

/** The keys whose values differ between `before` and `after` (top level). */
function diff(before: unknown, after: unknown): { key: string; before: string; after: string }[] {
  const b = (before && typeof before === "object" ? before : {}) as Record<string, unknown>;
  const a = (after && typeof after === "object" ? after : {}) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])].sort();
  return keys
    .map((key) => ({ key, before: JSON.stringify(b[key]) ?? "—", after: JSON.stringify(a[key]) ?? "—" }))
    .filter((row) => row.before !== row.after);
}

/** The audit page. */
export function Audit() {
  const [after, setAfter] = useState<number[]>([0]);
  const cursor = after[after.length - 1];
  const loaded = useLoad(
    () => api("GET", `/svc-admin/audit/entries${query({ afterSeq: cursor, limit: PAGE })}`),
    String(cursor),
  );
  const [report, setReport] = useState<any>(null);
  const [verifyError, setVerifyError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const verify = async () => {
    setBusy(true);
    setVerifyError(undefined);
    try {
      setReport(await api("GET", "/svc-admin/audit/verify"));
    } catch (error) {
      setVerifyError(error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page title="Audit">
      <section class="card" aria-labelledby="verify-h">
        <h2 id="verify-h">Chain verification</h2>
        <button type="button" class="primary" onClick={verify} disabled={busy}>Verify the chain</button>
        <div aria-live="polite">
          {report
            ? (
              <p data-chain={report.valid ? "valid" : "broken"} class={report.valid ? "ok" : "bad"}>
                {report.valid
                  ? `The chain is intact: ${report.checked} entries checked, head #${report.headSeq}.`
                  : `The chain is broken at entry #${report.firstBad?.seq}: ${report.firstBad?.reason}.`}
              </p>
            )
            : null}
          {verifyError !== undefined ? <ErrorNote error={verifyError} /> : null}
        </div>
      </section>
      <Show loaded={loaded}>
        {(d) =>
          d.entries.length === 0 ? <Empty>No entry here.</Empty> : (
            <>
              <ol class="entries">
                {(d.entries as any[]).map((e) => (
                  <li>
                    <details>
                      <summary>
                        #{e.seq} <code>{e.action}</code> by {e.actorKind}{" "}
                        <code title={e.actorId}>{shortId(e.actorId)}</code>
                        {e.target
                          ? (
                            <>
                              {" "}on <code title={e.target}>{shortId(e.target)}</code>
                            </>
                          )
                          : null} · <When at={e.occurredAt} />
                      </summary>
                      <table class="diff">
                        <thead>
                          <tr>
                            <th scope="col">Field</th>
                            <th scope="col">Before</th>
                            <th scope="col">After</th>
                          </tr>
                        </thead>
                        <tbody>
                          {diff(e.before, e.after).map((row) => (
                            <tr>
                              <th scope="row">{row.key}</th>
                              <td class="del">{row.before}</td>
                              <td class="ins">{row.after}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                      <small class="muted">entry hash {e.entryHash.slice(0, 16)}…</small>
                    </details>
                  </li>
                ))}
              </ol>
              <nav class="pager" aria-label="Pages">
                <button
                  type="button"
                  disabled={after.length === 1}
                  onClick={() => setAfter(after.slice(0, -1))}
                >
                  Previous
                </button>
                <button
                  type="button"
                  disabled={d.entries.length < PAGE}
                  onClick={() => setAfter([...after, d.entries[d.entries.length - 1].seq])}
                >
                  Next
                </button>
              </nav>
            </>
          )}
      </Show>
    </Page>
  );
}

/** An id as a row shows it: a UUID by its first 8 characters and an ellipsis (the full id on hover), a name whole. */
export function shortId(id: string): string {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id) ? `${id.slice(0, 8)}…` : id;
}
