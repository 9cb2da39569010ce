/**
 * IdP metadata by URL, fetched through svc's outbound guard: by the admin routes (a new
 * connection, a changed URL, `refreshMetadata`) and by the maintenance job's periodic refresh.
 *
 * @module
 */
import { checkOutboundUrl, outboundPolicyFromConfig, type PluginContext, SvcError } from "../../mod.ts";
import { MAX_XML_CHARS } from "./limits.ts";
import { type IdpMetadata, parseIdpMetadata, SamlMetadataError } from "./metadata.ts";

/** Metadata at a URL could not be used. Code `saml_metadata_unavailable`. */
export class MetadataUnavailableError extends SvcError {
  constructor() {
    super(
      "saml_metadata_unavailable",
      "Invalid request: the IdP metadata could not be fetched from idpMetadataUrl (refused, unreachable or not 200).",
      400,
    );
    this.name = "MetadataUnavailableError";
  }
}

/** The outcome of a fetch: the metadata, or why there is none (a code and, for metadata svc cannot read, the reason). */
export type MetadataFetch =
  | { readonly ok: true; readonly metadata: IdpMetadata }
  | {
    readonly ok: false;
    readonly code: "saml_metadata_unavailable" | "saml_metadata_invalid";
    readonly reason: string;
  };

/**
 * Fetches and reads the metadata at `url` through the outbound guard (3 redirects, 10 s, the XML
 * size limit). Never throws for the remote side's failures: they are the answer's `code`. The
 * reason of an unavailable document is coarse (refused, not 200, unreachable) whatever failed,
 * so that the answer says nothing of what sits behind the URL.
 */
export async function fetchIdpMetadata(ctx: PluginContext<unknown>, url: string): Promise<MetadataFetch> {
  const unavailable = (reason: string): MetadataFetch => ({
    ok: false,
    code: "saml_metadata_unavailable",
    reason,
  });
  if (checkOutboundUrl(url, outboundPolicyFromConfig(ctx.svcConfig)) !== null) {
    return unavailable("refused by the outbound guard");
  }
  let body: string;
  try {
    const res = await ctx.outbound(url, {
      maxRedirects: 3,
      timeoutMs: 10_000,
      maxResponseBytes: MAX_XML_CHARS,
      headers: { Accept: "application/samlmetadata+xml, application/xml, text/xml" },
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      return unavailable("the answer was not 200");
    }
    body = await res.text();
  } catch (err) {
    ctx.logError(`saml: metadata fetch failed (${err instanceof SvcError ? err.code : "error"})`);
    return unavailable("unreachable, refused or too large");
  }
  try {
    return { ok: true, metadata: parseIdpMetadata(body) };
  } catch (err) {
    if (err instanceof SamlMetadataError) {
      return { ok: false, code: "saml_metadata_invalid", reason: err.reason };
    }
    throw err;
  }
}

/** {@link fetchIdpMetadata} for an admin route: throws one neutral error when unavailable, {@link SamlMetadataError} when unreadable. */
export async function fetchIdpMetadataOrThrow(
  ctx: PluginContext<unknown>,
  url: string,
): Promise<IdpMetadata> {
  const fetched = await fetchIdpMetadata(ctx, url);
  if (fetched.ok) return fetched.metadata;
  if (fetched.code === "saml_metadata_invalid") throw new SamlMetadataError(fetched.reason);
  throw new MetadataUnavailableError();
}
