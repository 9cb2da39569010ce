/**
 * SCIM discovery (RFC 7644 §4): `/ServiceProviderConfig` (what is supported, bulk's limits
 * included), `/ResourceTypes` and `/Schemas` of a connection.
 *
 * @module
 */
import { scimJson } from "./answers.ts";
import { notFound } from "./errors.ts";
import {
  ENTERPRISE_ATTRIBUTES,
  ENTERPRISE_SCHEMA,
  GROUP_ATTRIBUTES,
  GROUP_KIND,
  GROUP_SCHEMA,
  LIST_SCHEMA,
  type ResourceKind,
  schemaAttributes,
  USER_ATTRIBUTES,
  USER_KIND,
  USER_SCHEMA,
} from "./schema.ts";
import type { ScimConnection } from "./store.ts";

import { MAX_COUNT, type ScimKit } from "./kit.ts";

/** The discovery answers over `kit`. */
export function discovery(kit: ScimKit) {
  const { ctx, deps } = kit;
  const serviceProviderConfig = (connection: ScimConnection) => {
    return scimJson({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
      documentationUri: "https://datatracker.ietf.org/doc/html/rfc7644",
      patch: { supported: true },
      bulk: {
        supported: true,
        maxOperations: ctx.config.bulkMaxOperations,
        maxPayloadSize: ctx.config.bulkMaxPayloadBytes,
      },
      filter: { supported: true, maxResults: MAX_COUNT },
      changePassword: { supported: false },
      sort: { supported: true },
      etag: { supported: true },
      authenticationSchemes: [{
        type: "oauthbearertoken",
        name: "Bearer token",
        description: "The connection's bearer token (Authorization: Bearer svc_scim_…)",
        primary: true,
      }],
      meta: {
        resourceType: "ServiceProviderConfig",
        location: `${deps.baseUrlOf(connection.id)}/ServiceProviderConfig`,
      },
    });
  };

  const resourceTypeOf = (connection: ScimConnection, kind: ResourceKind) => ({
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
    id: kind.name,
    name: kind.name,
    endpoint: kind.endpoint,
    description: kind.name === "User" ? "Members of the organization" : "Groups of the organization",
    schema: kind.schema,
    schemaExtensions: Object.keys(kind.extensions).map((urn) => ({ schema: urn, required: false })),
    meta: {
      resourceType: "ResourceType",
      location: `${deps.baseUrlOf(connection.id)}/ResourceTypes/${kind.name}`,
    },
  });

  const schemaOf = (connection: ScimConnection, id: string) => {
    const table: Record<string, [string, Parameters<typeof schemaAttributes>[0]]> = {
      [USER_SCHEMA]: ["User", USER_ATTRIBUTES],
      [GROUP_SCHEMA]: ["Group", GROUP_ATTRIBUTES],
      [ENTERPRISE_SCHEMA]: ["EnterpriseUser", ENTERPRISE_ATTRIBUTES],
    };
    const [name, attrs] = table[id];
    return {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
      id,
      name,
      description: name,
      attributes: schemaAttributes(attrs),
      meta: { resourceType: "Schema", location: `${deps.baseUrlOf(connection.id)}/Schemas/${id}` },
    };
  };

  const listOf = (resources: unknown[]) =>
    scimJson({
      schemas: [LIST_SCHEMA],
      totalResults: resources.length,
      startIndex: 1,
      itemsPerPage: resources.length,
      Resources: resources,
    });

  return {
    serviceProviderConfig,
    resourceTypes: (connection: ScimConnection) =>
      listOf([resourceTypeOf(connection, USER_KIND), resourceTypeOf(connection, GROUP_KIND)]),
    resourceType: (connection: ScimConnection, name: string | undefined) => {
      const kind = [USER_KIND, GROUP_KIND].find((k) => k.name === name);
      if (kind === undefined) throw notFound();
      return scimJson(resourceTypeOf(connection, kind));
    },
    schemas: (connection: ScimConnection) =>
      listOf([USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE_SCHEMA].map((id) => schemaOf(connection, id))),
    schema: (connection: ScimConnection, urn: string | undefined) => {
      const id = [USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE_SCHEMA].find((s) => s === urn);
      if (id === undefined) throw notFound();
      return scimJson(schemaOf(connection, id));
    },
  };
}
