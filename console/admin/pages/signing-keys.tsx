/**
 * Signing keys: the realm's keys (never their material) and rotation.
 *
 * @module
 */
import { useState } from "hono/jsx/dom";
import { api } from "../api.ts";
import { useSession } from "../session.ts";
import { ConfirmButton, Empty, Page, Show, Table, useLoad, When } from "../ui.tsx";

/** The signing keys page. */
export function SigningKeys() {
  const session = useSession();
  const loaded = useLoad(() => api("GET", "/svc-admin/signing-keys?limit=100"), "keys");
  const [rotation, setRotation] = useState<any>(null);
  return (
    <Page
      title="Signing keys"
      actions={session.isGlobal("signing-keys-manage")
        ? (
          <ConfirmButton
            label="Rotate now"
            title="Rotate the signing key?"
            message="A new primary key signs from now on; the previous one stays published through the overlap."
            onConfirm={async () => {
              setRotation(await api("POST", "/svc-admin/signing-keys/rotate"));
              loaded.reload();
            }}
          />
        )
        : undefined}
    >
      {rotation
        ? (
          <p role="status" class="ok">
            New primary key <code>{rotation.primaryKid}</code>.
          </p>
        )
        : null}
      <Show loaded={loaded}>
        {(list) =>
          list.items.length === 0 ? <Empty>No signing key.</Empty> : (
            <Table
              columns={["Key ID", "Algorithm", "State", "Created", "Retired"]}
              rows={list.items as any[]}
              row={(k) => (
                <>
                  <td>
                    <code>{k.kid}</code>
                  </td>
                  <td>{k.algorithm}</td>
                  <td>{k.primary ? "primary" : k.published ? "published" : "retired"}</td>
                  <td>
                    <When at={k.createdAt} />
                  </td>
                  <td>
                    <When at={k.retiredAt} />
                  </td>
                </>
              )}
            />
          )}
      </Show>
    </Page>
  );
}
