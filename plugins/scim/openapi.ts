/**
 * The OpenAPI entries of the SCIM endpoints (documented as `public`: the caller is the
 * connection's bearer token, not a svc session).
 *
 * @module
 */
import * as v from "valibot";
import type { OperationDoc } from "../../mod.ts";
import { SCIM_PREFIX } from "./shared.ts";

const TAGS = ["SCIM 2.0"];
const SCIM_AUTH =
  "The caller is the connection's bearer token (`Authorization: Bearer svc_scim_…`), not a svc session.";
const Resource = v.pipe(
  v.looseObject({ schemas: v.optional(v.array(v.string())), id: v.optional(v.string()) }),
  v.title("ScimResource"),
);
const ListResponse = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    totalResults: v.number(),
    startIndex: v.optional(v.number()),
    itemsPerPage: v.optional(v.number()),
    Resources: v.array(Resource),
  }),
  v.title("ScimListResponse"),
);
const PatchOp = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    Operations: v.array(
      v.looseObject({ op: v.string(), path: v.optional(v.string()), value: v.optional(v.unknown()) }),
    ),
  }),
  v.title("ScimPatchOp"),
);
const BulkRequest = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    failOnErrors: v.optional(v.number()),
    Operations: v.array(
      v.looseObject({
        method: v.string(),
        bulkId: v.optional(v.string()),
        version: v.optional(v.string()),
        path: v.string(),
        data: v.optional(v.unknown()),
      }),
    ),
  }),
  v.title("ScimBulkRequest"),
);
const BulkResponse = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    Operations: v.array(
      v.looseObject({
        method: v.string(),
        bulkId: v.optional(v.string()),
        location: v.optional(v.string()),
        version: v.optional(v.string()),
        status: v.string(),
        response: v.optional(v.unknown()),
      }),
    ),
  }),
  v.title("ScimBulkResponse"),
);
const ErrorBody = v.pipe(
  v.looseObject({
    schemas: v.array(v.string()),
    status: v.string(),
    scimType: v.optional(v.string()),
    detail: v.string(),
  }),
  v.title("ScimError"),
);
const ListQuery = v.looseObject({
  filter: v.optional(v.string()),
  startIndex: v.optional(v.string()),
  count: v.optional(v.string()),
  sortBy: v.optional(v.string()),
  sortOrder: v.optional(v.string()),
  attributes: v.optional(v.string()),
  excludedAttributes: v.optional(v.string()),
});
const ok = (description: string, body: v.GenericSchema = Resource) => ({
  description,
  body,
  mediaType: "application/scim+json",
});
const refusals = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((
      status,
    ) => [status, { description: "A SCIM error", body: ErrorBody, mediaType: "application/scim+json" }]),
  );
const CONNECTION = { connectionId: "The connection's id" };
const ITEM_PARAMS = { ...CONNECTION, id: "The resource's id" };
const BASE_PATH = `${SCIM_PREFIX}/:connectionId`;

function resourceOperations(name: "Users" | "Groups"): OperationDoc[] {
  const one = name === "Users" ? "user" : "group";
  return [
    {
      method: "GET",
      path: `${BASE_PATH}/${name}`,
      summary: `List or filter ${name.toLowerCase()} (SCIM)`,
      description: `${SCIM_AUTH} RFC 7644 filter, sorting, paging and attribute selection.`,
      tags: TAGS,
      auth: "public",
      params: CONNECTION,
      query: ListQuery,
      responses: { 200: ok("A list response", ListResponse), ...refusals(400, 401) },
    },
    {
      method: "POST",
      path: `${BASE_PATH}/${name}`,
      summary: `Create a ${one} (SCIM)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: CONNECTION,
      body: Resource,
      responses: { 201: ok("Created"), ...refusals(400, 401, 403, 409, 413) },
    },
    {
      method: "GET",
      path: `${BASE_PATH}/${name}/:id`,
      summary: `Read a ${one} (SCIM)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: ITEM_PARAMS,
      responses: {
        200: ok(`The ${one}`),
        304: { description: "Not modified (If-None-Match)" },
        ...refusals(401, 404),
      },
    },
    {
      method: "PUT",
      path: `${BASE_PATH}/${name}/:id`,
      summary: `Replace a ${one} (SCIM)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: ITEM_PARAMS,
      body: Resource,
      responses: { 200: ok(`The ${one}`), ...refusals(400, 401, 403, 404, 409, 412, 413) },
    },
    {
      method: "PATCH",
      path: `${BASE_PATH}/${name}/:id`,
      summary: `Change a ${one} (SCIM PATCH)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: ITEM_PARAMS,
      body: PatchOp,
      responses: { 200: ok(`The ${one}`), ...refusals(400, 401, 403, 404, 409, 412, 413) },
    },
    {
      method: "DELETE",
      path: `${BASE_PATH}/${name}/:id`,
      summary: `Delete a ${one} (SCIM)`,
      description: SCIM_AUTH,
      tags: TAGS,
      auth: "public",
      params: ITEM_PARAMS,
      responses: { 204: { description: "Deleted" }, ...refusals(401, 403, 404, 412) },
    },
  ];
}

/** Every SCIM endpoint's entry. */
export const OPERATIONS: readonly OperationDoc[] = [
  ...["ServiceProviderConfig", "ResourceTypes", "ResourceTypes/:name", "Schemas", "Schemas/:id"].map((
    what,
  ): OperationDoc => ({
    method: "GET",
    path: `${BASE_PATH}/${what}`,
    summary: `SCIM discovery: ${what.replace("/:name", " (one)").replace("/:id", " (one)")}`,
    description: SCIM_AUTH,
    tags: TAGS,
    auth: "public",
    params: what.endsWith(":name")
      ? { ...CONNECTION, name: "User or Group" }
      : what.endsWith(":id")
      ? { ...CONNECTION, id: "A schema URN" }
      : CONNECTION,
    responses: { 200: ok("The description"), ...refusals(401, 404) },
  })),
  ...resourceOperations("Users"),
  ...resourceOperations("Groups"),
  {
    method: "POST",
    path: `${BASE_PATH}/Bulk`,
    summary: "Several writes in one request (SCIM /Bulk)",
    description:
      `${SCIM_AUTH} RFC 7644 §3.7: POST, PUT, PATCH and DELETE operations on /Users and /Groups, each through the same handler, audit entry and events as its own route (not atomic); \`bulkId:\` references in paths and data; failOnErrors. More operations than maxOperations: 413 tooMany; a body over maxPayloadSize: 413.`,
    tags: TAGS,
    auth: "public",
    params: CONNECTION,
    body: BulkRequest,
    responses: {
      200: ok("A bulk response: each operation's status", BulkResponse),
      ...refusals(400, 401, 413),
    },
  },
];
