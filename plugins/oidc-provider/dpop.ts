/**
 * DPoP (RFC 9449) at the provider's endpoints, on svc's DPoP verifier (`mod.ts`):
 *
 * - the token endpoint takes an optional `DPoP` proof (`htu` = the token endpoint); with one the
 *   access token is bound (`cnf.jkt`, `token_type: DPoP`) and, for a public client, so is the
 *   refresh family; a client registered with `dpopBoundAccessTokens` must send one. Errors are
 *   400 `invalid_dpop_proof` or `use_dpop_nonce` (with `DPoP-Nonce`) as section 5 and 8 say;
 * - userinfo takes `Authorization: DPoP` with a proof carrying `ath` for a bound token, refuses a
 *   bound token as Bearer, and answers `WWW-Authenticate: DPoP` challenges (section 7.1).
 *
 * @module
 */
import type { Context } from "hono";
import { DpopNonceError, DpopProofError, type DpopVerifier, type VerifiedDpopProof } from "../../mod.ts";
import { oauthError, PATHS, type Provider } from "./shared.ts";

/** The token endpoint's proof: its key thumbprint, null without one, or the error answer. */
export async function tokenEndpointProof(
  p: Provider,
  c: Context,
  requireProof: boolean,
): Promise<{ jkt: string | null } | Response> {
  let proof: VerifiedDpopProof | null;
  try {
    proof = await p.dpop.check(c, { url: p.url(PATHS.token) });
  } catch (error) {
    if (error instanceof DpopNonceError) {
      const nonce = await p.dpop.currentNonce();
      if (nonce !== null) c.header("DPoP-Nonce", nonce);
      return oauthError(c, 400, "use_dpop_nonce", "Authorization server requires nonce in DPoP proof");
    }
    if (error instanceof DpopProofError) {
      return oauthError(c, 400, "invalid_dpop_proof", `the DPoP proof is invalid (${error.reason})`);
    }
    throw error;
  }
  if (proof === null && requireProof) {
    return oauthError(c, 400, "invalid_dpop_proof", "this client's access tokens must be DPoP-bound");
  }
  if (proof !== null) await p.dpop.provideNonce(c);
  return { jkt: proof?.jkt ?? null };
}

/** The `WWW-Authenticate: DPoP` value (with the algorithms a proof may use). */
function challenge(p: Provider, error: string | null, description?: string): string {
  const parts = [`algs="${p.dpopAlgorithms.join(" ")}"`];
  if (error !== null) parts.unshift(`error="${error}"`);
  if (description !== undefined) parts.push(`error_description="${description}"`);
  return `DPoP ${parts.join(", ")}`;
}

/**
 * Checks the DPoP side of a resource request (userinfo) once its token verified: `scheme` is
 * how the token came (`bearer`, `dpop`, or `form` for RFC 6750 2.2), `jkt` the token's
 * `cnf.jkt`. Null: go on; else the 401 (or 400) answer.
 */
export async function resourceDpop(
  p: Provider,
  c: Context,
  scheme: "bearer" | "dpop" | "form",
  token: string,
  jkt: string | undefined,
  url: string,
): Promise<Response | null> {
  const refuse = (error: string, description: string, headers: Record<string, string> = {}) => {
    c.header("WWW-Authenticate", challenge(p, error, description));
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    return c.json({ error, error_description: description }, 401);
  };
  if (jkt === undefined) {
    if (scheme === "dpop") return refuse("invalid_token", "the access token is not DPoP-bound");
    return null;
  }
  if (scheme !== "dpop") return refuse("invalid_token", "a DPoP-bound access token needs the DPoP scheme");
  try {
    const proof = await p.dpop.check(c, { url, accessToken: token, boundJkt: jkt });
    if (proof === null) return refuse("invalid_dpop_proof", "the DPoP proof is missing");
  } catch (error) {
    if (error instanceof DpopNonceError) {
      const nonce = await p.dpop.currentNonce();
      return refuse(
        "use_dpop_nonce",
        "Resource server requires nonce in DPoP proof",
        nonce ? { "DPoP-Nonce": nonce } : {},
      );
    }
    if (error instanceof DpopProofError) return refuse("invalid_dpop_proof", "the DPoP proof is invalid");
    throw error;
  }
  await p.dpop.provideNonce(c);
  return null;
}

export type { DpopVerifier };
