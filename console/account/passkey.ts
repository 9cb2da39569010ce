/**
 * WebAuthn for the hosted pages: svc's passkey options (JSON, base64url) handed to
 * `navigator.credentials.create/get`, and the credential written back as
 * `PublicKeyCredential.toJSON()` would write it.
 *
 * @module
 */

function enc(buf: ArrayBuffer): string {
  let s = "";
  for (const b of new Uint8Array(buf)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function dec(text: string): ArrayBuffer {
  const s = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(s + "=".repeat((4 - (s.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0)).buffer;
}

/** Whether this browser can use passkeys at all. */
export function passkeysAvailable(): boolean {
  return typeof PublicKeyCredential !== "undefined" && !!navigator.credentials;
}

/** Creates a credential from svc's registration options; the JSON svc's `POST /auth/passkey/register` takes. */
export async function createCredential(options: any): Promise<unknown> {
  const publicKey = {
    ...options,
    challenge: dec(options.challenge),
    user: { ...options.user, id: dec(options.user.id) },
    excludeCredentials: (options.excludeCredentials ?? []).map((c: any) => ({ ...c, id: dec(c.id) })),
  };
  const cred = await navigator.credentials.create({ publicKey }) as PublicKeyCredential;
  const response = cred.response as AuthenticatorAttestationResponse;
  return {
    id: cred.id,
    rawId: enc(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? null,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: {
      clientDataJSON: enc(response.clientDataJSON),
      attestationObject: enc(response.attestationObject),
      transports: response.getTransports ? response.getTransports() : [],
    },
  };
}

/**
 * Whether the browser offers passkeys in the autofill of a field marked
 * `autocomplete="username webauthn"` (WebAuthn conditional mediation).
 */
export async function conditionalMediationAvailable(): Promise<boolean> {
  if (!passkeysAvailable()) return false;
  const check =
    (PublicKeyCredential as unknown as { isConditionalMediationAvailable?: () => Promise<boolean> })
      .isConditionalMediationAvailable;
  try {
    return typeof check === "function" && await check.call(PublicKeyCredential);
  } catch {
    return false;
  }
}

/**
 * Gets an assertion for svc's login options; the JSON svc's `POST /auth/passkey/login` takes.
 * `mediation: "conditional"` waits for the person to pick a passkey in the autofill; `signal`
 * aborts it (before another ceremony starts: one at a time).
 */
export async function getAssertion(
  options: any,
  how: { mediation?: "conditional"; signal?: AbortSignal } = {},
): Promise<unknown> {
  const publicKey = {
    ...options,
    challenge: dec(options.challenge),
    allowCredentials: (options.allowCredentials ?? []).map((c: any) => ({ ...c, id: dec(c.id) })),
  };
  const cred = await navigator.credentials.get(
    { publicKey, ...how } as CredentialRequestOptions,
  ) as PublicKeyCredential;
  const response = cred.response as AuthenticatorAssertionResponse;
  return {
    id: cred.id,
    rawId: enc(cred.rawId),
    type: cred.type,
    authenticatorAttachment: cred.authenticatorAttachment ?? null,
    clientExtensionResults: cred.getClientExtensionResults(),
    response: {
      clientDataJSON: enc(response.clientDataJSON),
      authenticatorData: enc(response.authenticatorData),
      signature: enc(response.signature),
      userHandle: response.userHandle ? enc(response.userHandle) : null,
    },
  };
}
