import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import * as v from "valibot";
import {
  buildOpenApiDocument,
  openApiPath,
  operationId,
  pathParameters,
} from "../../../http/openapi/document.ts";
import { errorResponses, type OperationDoc } from "../../../http/openapi/operation.ts";

const INFO = { title: "svc", version: "0.0.0-test", serverUrl: "http://localhost:8080" };

const User = v.pipe(
  v.object({ id: v.string(), email: v.pipe(v.string(), v.email()), displayName: v.nullable(v.string()) }),
  v.title("User"),
);
const CreateUser = v.strictObject({
  email: v.pipe(v.string(), v.maxLength(320)),
  displayName: v.optional(v.string()),
  attributes: v.optional(v.record(v.string(), v.unknown())),
});
const OPS: OperationDoc[] = [
  {
    method: "POST",
    path: "/svc-admin/users",
    summary: "Create a user",
    tags: ["Admin: users"],
    permissions: ["svc:global:users-manage"],
    body: CreateUser,
    responses: { 201: { description: "Created", body: User }, ...errorResponses(400, 401, 403, 409) },
  },
  {
    method: "GET",
    path: "/svc-admin/users/:userId",
    summary: "Read a user",
    tags: ["Admin: users"],
    params: { userId: "The user id" },
    query: v.object({ expand: v.optional(v.pipe(v.string(), v.description("what to expand"))) }),
    responses: { 200: { description: "The user", body: User }, ...errorResponses(401, 403, 404) },
  },
  {
    method: "GET",
    path: "/healthz",
    summary: "Liveness",
    tags: ["Health"],
    auth: "public",
    responses: { 200: { description: "Alive", body: v.object({ status: v.literal("ok") }) } },
  },
];

Deno.test("openapi: paths, parameters and operation ids", () => {
  assert.equal(
    openApiPath("/svc-admin/users/:userId/sessions/:sessionId"),
    "/svc-admin/users/{userId}/sessions/{sessionId}",
  );
  assert.deepEqual(pathParameters("/a/:x/b/:y"), ["x", "y"]);
  assert.equal(
    operationId({ method: "DELETE", path: "/svc-admin/users/:userId" }),
    "delete_svc-admin_users_userId",
  );
});

Deno.test("openapi: the document validates against the OpenAPI 3.1 schema", async () => {
  const doc = buildOpenApiDocument(INFO, OPS);
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc) as unknown as Record<string, unknown>);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.equal(validator.version, "3.1");
  // The validator does refuse a broken document (a response without a description).
  const broken = structuredClone(doc) as any;
  delete broken.paths["/healthz"].get.responses["200"].description;
  assert.equal((await new Validator().validate(broken)).valid, false);
});

Deno.test("openapi: titled schemas become shared components; bodies and parameters come from the valibot schemas", () => {
  const doc = buildOpenApiDocument(INFO, OPS);
  const user = doc.components.schemas.User as Record<string, any>;
  assert.deepEqual(user.required, ["id", "email", "displayName"]);
  const create = doc.paths["/svc-admin/users"].post as Record<string, any>;
  assert.deepEqual(create.responses["201"].content["application/json"].schema, {
    $ref: "#/components/schemas/User",
  });
  const body = create.requestBody.content["application/json"].schema;
  assert.equal(body.additionalProperties, false);
  assert.deepEqual(body.required, ["email"]);
  assert.equal(body.properties.email.maxLength, 320);
  assert.deepEqual(create["x-svc-permissions"], ["svc:global:users-manage"]);
  const read = doc.paths["/svc-admin/users/{userId}"].get as Record<string, any>;
  assert.deepEqual(read.parameters.map((p: any) => [p.name, p.in, p.required]), [
    ["userId", "path", true],
    ["expand", "query", false],
  ]);
  assert.equal(read.parameters[1].description, "what to expand");
  assert.deepEqual((doc.paths["/healthz"].get as Record<string, any>).security, []);
});

Deno.test("openapi: one method and path documented twice, or two schemas with one title, is refused", () => {
  assert.throws(() => buildOpenApiDocument(INFO, [OPS[2], OPS[2]]), /documented twice/);
  const Other = v.pipe(v.object({ id: v.number() }), v.title("User"));
  assert.throws(
    () =>
      buildOpenApiDocument(INFO, [OPS[0], {
        ...OPS[2],
        path: "/other",
        responses: { 200: { description: "x", body: Other } },
      }]),
    /two different schemas are titled "User"/,
  );
});
