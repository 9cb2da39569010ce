/** The checks of `private_key_jwt` client keys: public members only, known key types, safe JWKS URLs. */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { exportJWK, generateKeyPair } from "jose";
import { clientJwksProblem, clientJwksUriProblem } from "../../../core/credentials/client-keys.ts";

const rsa = await exportJWK((await generateKeyPair("RS256", { extractable: true })).privateKey);
const ec = await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey);
const ed = await exportJWK((await generateKeyPair("EdDSA", { extractable: true })).privateKey);
const publicOf = ({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest }: Record<string, unknown>) =>
  rest;

Deno.test("client keys: public RSA, P-256 and Ed25519 keys are accepted", () => {
  assert.equal(clientJwksProblem({ keys: [publicOf(rsa), publicOf(ec), publicOf(ed)] }), null);
  assert.equal(clientJwksProblem({ keys: [{ ...publicOf(ec), kid: "a", alg: "ES256", use: "sig" }] }), null);
});

Deno.test("client keys: any private or symmetric member is refused (property)", () => {
  const members = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
  fc.assert(
    fc.property(
      fc.constantFrom(publicOf(rsa), publicOf(ec), publicOf(ed)),
      fc.constantFrom(...members),
      fc.string(),
      (key, member, value) => {
        const problem = clientJwksProblem({ keys: [{ ...key, [member]: value }] });
        return problem !== null && problem.includes("private member");
      },
    ),
  );
  assert.match(clientJwksProblem({ keys: [rsa] })!, /private member/);
});

Deno.test("client keys: shapes, algorithms, sizes and duplicates", () => {
  assert.match(clientJwksProblem(null)!, /JWK Set/);
  assert.match(clientJwksProblem({ keys: [] })!, /1 to 10/);
  assert.match(clientJwksProblem({ keys: Array(11).fill(publicOf(ec)) })!, /1 to 10/);
  assert.match(clientJwksProblem({ keys: [{ kty: "oct" }] })!, /kty/);
  assert.match(clientJwksProblem({ keys: [{ ...publicOf(ec), alg: "none" }] })!, /alg/);
  assert.match(clientJwksProblem({ keys: [{ ...publicOf(ec), alg: "HS256" }] })!, /alg/);
  assert.match(clientJwksProblem({ keys: [{ ...publicOf(ec), use: "enc" }] })!, /use/);
  assert.match(clientJwksProblem({ keys: [{ ...publicOf(ec), crv: "P-384" }] })!, /P-256/);
  assert.match(clientJwksProblem({ keys: [{ kty: "RSA", n: "AQAB", e: "AQAB" }] })!, /2048/);
  const k = { ...publicOf(ec), kid: "same" };
  assert.match(clientJwksProblem({ keys: [k, k] })!, /twice/);
});

Deno.test("client keys: a jwksUri is https, or http on an allowed private host", () => {
  const none = { allowPrivate: [] };
  const local = { allowPrivate: ["127.0.0.1"] };
  assert.equal(clientJwksUriProblem("https://keys.example.com/jwks.json", none), null);
  assert.match(clientJwksUriProblem("http://keys.example.com/jwks.json", none)!, /https/);
  assert.match(clientJwksUriProblem("http://keys.example.com/jwks.json", local)!, /https/);
  assert.match(clientJwksUriProblem("https://127.0.0.1/jwks.json", none)!, /private or loopback/);
  assert.match(clientJwksUriProblem("https://[::ffff:10.0.0.1]/jwks", none)!, /private or loopback/);
  assert.match(clientJwksUriProblem("https://localhost/jwks", none)!, /private or loopback/);
  assert.equal(clientJwksUriProblem("http://127.0.0.1:8080/jwks.json", local), null);
  assert.match(clientJwksUriProblem("https://user:pw@keys.example.com/", none)!, /credentials/);
  assert.match(clientJwksUriProblem("ftp://keys.example.com/", none)!, /https/);
  assert.match(clientJwksUriProblem("https://keys.example.com/#x", none)!, /fragment/);
  assert.match(clientJwksUriProblem("not a url", none)!, /absolute URL/);
});
