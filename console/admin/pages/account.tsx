/**
 * The administrator's own passkeys: list, register one (so the next sign-in can be passkey
 * first), remove.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api } from "../api.ts";
import { createCredential } from "../webauthn.ts";
import { ConfirmButton, Empty, ErrorNote, Field, Page, Show, Table, useLoad, When } from "../ui.tsx";

/**
 * Registers a passkey for the signed-in administrator: the server's options, the browser's
 * ceremony, the server's check. "My passkeys" and the page after first-run setup both use it.
 */
export async function addPasskey(name: string): Promise<void> {
  const start = await api("POST", "/auth/passkey/register/options", name ? { name } : {});
  const response = await createCredential(start.options);
  await api("POST", "/auth/passkey/register", {
    ceremonyId: start.ceremonyId,
    response,
    ...(name ? { name } : {}),
  });
}

/** The "my passkeys" page. */
export function MyAccount() {
  const loaded = useLoad(() => api("GET", "/auth/passkey"), "passkeys");
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const [done, setDone] = useState(false);
  const register = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setDone(false);
    try {
      await addPasskey(name);
      setDone(true);
      loaded.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Page title="My passkeys">
      <Show loaded={loaded}>
        {(d) =>
          d.passkeys.length === 0 ? <Empty>No passkey yet.</Empty> : (
            <Table
              columns={["Name", "Created", "Last used", ""]}
              rows={d.passkeys as any[]}
              row={(p) => (
                <>
                  <td>{p.name ?? "passkey"}</td>
                  <td>
                    <When at={p.createdAt} />
                  </td>
                  <td>
                    <When at={p.lastUsedAt} />
                  </td>
                  <td>
                    <ConfirmButton
                      label="Remove"
                      title="Remove this passkey?"
                      message="You can no longer sign in with it."
                      onConfirm={async () => {
                        await api("DELETE", `/auth/passkey/${encodeURIComponent(p.credentialId)}`);
                        loaded.reload();
                      }}
                    />
                  </td>
                </>
              )}
            />
          )}
      </Show>
      <form onSubmit={register} class="card" aria-labelledby="reg-h">
        <h2 id="reg-h">Add a passkey</h2>
        <Field label="Name (optional)" name="name" onInput={setName} />
        {error !== undefined ? <ErrorNote error={error} /> : null}
        {done ? <p role="status" class="ok">Passkey added.</p> : null}
        <button type="submit" class="primary">Add a passkey</button>
      </form>
    </Page>
  );
}
