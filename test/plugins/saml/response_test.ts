/**
 * The response validator against responses signed by samlify (a SAML IdP nobody here wrote):
 * valid ones (assertion signed, Response signed, both, a rolled-over certificate) are accepted
 * and read from the signed bytes; a table of refused ones (unsigned, wrong key with its
 * certificate in KeyInfo, each signature-wrapping variant XSW1–8 built by moving the nodes of a
 * valid signed document, wrong audience, destination, recipient and issuer, expired, not yet
 * valid, InResponseTo mismatch, DTD and external-entity payloads) is refused, each for its reason.
 */
import { strict as assert } from "node:assert";
// @ts-types="../../../plugins/saml/xmldom.d.ts"
import { DOMParser, XMLSerializer } from "@xmldom/xmldom";
import {
  type ResponseExpectations,
  SamlRefusedError,
  validateResponse,
} from "../../../plugins/saml/response.ts";
import { fixture, testIdp } from "./idp.ts";

/** A DOM node of the test documents (xmldom, manipulated freely: typed loosely). */
type Dom = any;

const SP = { entityId: "https://svc.test/saml/c1/metadata", acsUrl: "https://svc.test/saml/c1/acs" };
const IDP = testIdp();
const DS = "http://www.w3.org/2000/09/xmldsig#";
const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
const SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol";

function expectations(now: number, over: Partial<ResponseExpectations> = {}): ResponseExpectations {
  return {
    spEntityId: SP.entityId,
    acsUrl: SP.acsUrl,
    idpEntityId: IDP.entityId,
    certificates: [fixture("idp").cert],
    requestId: "_req1",
    now,
    skewMs: 60_000,
    ...over,
  };
}

async function refusal(xml: string, expect: ResponseExpectations): Promise<string> {
  try {
    await validateResponse(xml, expect);
  } catch (err) {
    if (err instanceof SamlRefusedError) return err.reason;
    throw err;
  }
  assert.fail("accepted");
}

const parse = (xml: string): Dom => new DOMParser().parseFromString(xml, "text/xml");
const serialize = (doc: Dom) => new XMLSerializer().serializeToString(doc);
const first = (root: Dom, ns: string, name: string) => root.getElementsByTagNameNS(ns, name)[0];

/** Sets the NameID of an assertion element to the attacker's. */
function evil(assertion: Dom, id?: string): Dom {
  const copy = assertion.cloneNode(true) as Dom;
  first(copy, SAML, "NameID").textContent = "mallory@acme.test";
  if (id !== undefined) copy.setAttribute("ID", id);
  return copy;
}

function withoutSignature(el: Dom): Dom {
  const copy = el.cloneNode(true) as Dom;
  for (const child of Array.from(copy.childNodes)) {
    if ((child as Dom).localName === "Signature") copy.removeChild(child);
  }
  return copy;
}

/** The XSW variants of Somorovsky et al. ("On Breaking SAML", 2012), from a valid document. */
function wrapped(assertionSigned: string, responseSigned: string): Record<string, string> {
  const out: Record<string, string> = {};
  {
    // XSW1: an evil Response wraps the signed one inside its Signature (ds:Object).
    const doc = parse(responseSigned);
    const original = doc.documentElement!;
    const evilResponse = withoutSignature(original);
    evilResponse.setAttribute("ID", "_evil_response");
    first(evilResponse, SAML, "NameID").textContent = "mallory@acme.test";
    const signature = first(original, DS, "Signature").cloneNode(true) as Dom;
    const object = doc.createElementNS(DS, "ds:Object");
    object.appendChild(original.cloneNode(true));
    signature.appendChild(object);
    evilResponse.insertBefore(signature, evilResponse.firstChild);
    doc.replaceChild(evilResponse, original);
    out.XSW1 = serialize(doc);
  }
  {
    // XSW2: as XSW1, the signed Response a detached sibling of the Signature.
    const doc = parse(responseSigned);
    const original = doc.documentElement!;
    const evilResponse = withoutSignature(original);
    evilResponse.setAttribute("ID", "_evil_response");
    first(evilResponse, SAML, "NameID").textContent = "mallory@acme.test";
    const signature = first(original, DS, "Signature").cloneNode(true) as Dom;
    evilResponse.insertBefore(original.cloneNode(true), evilResponse.firstChild);
    evilResponse.insertBefore(signature, evilResponse.firstChild);
    doc.replaceChild(evilResponse, original);
    out.XSW2 = serialize(doc);
  }
  const base = () => {
    const doc = parse(assertionSigned);
    const response = doc.documentElement!;
    const assertion = first(response, SAML, "Assertion");
    return { doc, response, assertion };
  };
  {
    // XSW3: an evil assertion (new ID) before the signed one.
    const { doc, response, assertion } = base();
    response.insertBefore(withoutSignature(evil(assertion, "_evil")), assertion);
    out.XSW3 = serialize(doc);
  }
  {
    // XSW4: an evil assertion wraps the signed one.
    const { doc, response, assertion } = base();
    const outer = withoutSignature(evil(assertion, "_evil"));
    outer.appendChild(assertion.cloneNode(true));
    response.replaceChild(outer, assertion);
    out.XSW4 = serialize(doc);
  }
  {
    // XSW5: the evil assertion keeps the signature (same ID); the signed one, unsigned, at the end.
    const { doc, response, assertion } = base();
    response.replaceChild(evil(assertion), assertion);
    response.appendChild(withoutSignature(assertion));
    out.XSW5 = serialize(doc);
  }
  {
    // XSW6: the evil assertion keeps the signature; the signed one inside the Signature's Object.
    const { doc, response, assertion } = base();
    const outer = evil(assertion);
    const signature = first(outer, DS, "Signature");
    const object = doc.createElementNS(DS, "ds:Object");
    object.appendChild(withoutSignature(assertion));
    signature.appendChild(object);
    response.replaceChild(outer, assertion);
    out.XSW6 = serialize(doc);
  }
  {
    // XSW7: the signed assertion in an Extensions element; an evil one (unsigned) in its place.
    const { doc, response, assertion } = base();
    const extensions = doc.createElementNS(SAMLP, "samlp:Extensions");
    extensions.appendChild(assertion.cloneNode(true));
    response.replaceChild(withoutSignature(evil(assertion)), assertion);
    response.insertBefore(extensions, response.firstChild);
    out.XSW7 = serialize(doc);
  }
  {
    // XSW8: the evil assertion keeps the signature; the signed one, without it, in the Object.
    const { doc, response, assertion } = base();
    const outer = evil(assertion);
    const signature = first(outer, DS, "Signature");
    const object = doc.createElementNS(DS, "ds:Object");
    object.appendChild(withoutSignature(assertion));
    signature.appendChild(object);
    response.replaceChild(outer, assertion);
    // …and the original signed assertion nowhere else: only the Object holds the signed bytes.
    out.XSW8 = serialize(doc);
  }
  return out;
}

Deno.test("valid responses signed by samlify are accepted and read from the signed bytes", async () => {
  const now = Date.now();
  for (
    const [name, sign] of [
      ["assertion signed", { signAssertion: true, signResponse: false }],
      ["response signed", { signAssertion: false, signResponse: true }],
      ["both signed", { signAssertion: true, signResponse: true }],
    ] as const
  ) {
    const xml = await IDP.respond(SP, {
      requestId: "_req1",
      nameId: "alice@acme.test",
      attributes: { email: "alice@acme.test", displayName: "Alice Anders" },
      now,
      ...sign,
    });
    const result = await validateResponse(xml, expectations(now));
    assert.equal(result.nameId, "alice@acme.test", name);
    assert.deepEqual(result.attributes.displayName, ["Alice Anders"], name);
    assert.match(result.assertionId, /^_/);
    assert.ok(result.consumeUntil.getTime() >= now + 5 * 60_000, name);
  }
  // Certificates roll over: a response signed by the second of two accepted certificates passes.
  const rolled = testIdp(IDP.entityId, fixture("idp2"));
  const xml = await rolled.respond(SP, { requestId: "_req1", nameId: "alice@acme.test", now });
  assert.equal(
    (await validateResponse(
      xml,
      expectations(now, { certificates: [fixture("idp").cert, fixture("idp2").cert] }),
    ))
      .nameId,
    "alice@acme.test",
  );
  assert.equal(
    await refusal(xml, expectations(now)),
    "signature invalid or not by the connection's certificates",
  );
  // IdP-initiated: no InResponseTo anywhere, and none expected.
  const unsolicited = await IDP.respond(SP, { requestId: null, nameId: "alice@acme.test", now });
  assert.equal(
    (await validateResponse(unsolicited, expectations(now, { requestId: null }))).nameId,
    "alice@acme.test",
  );
  assert.equal(await refusal(unsolicited, expectations(now)), "in_response_to mismatch");
});

Deno.test("refused responses: each for its reason", async (t) => {
  const now = Date.now();
  const ok = { requestId: "_req1", nameId: "alice@acme.test", now };
  const assertionSigned = await IDP.respond(SP, ok);
  const responseSigned = await IDP.respond(SP, { ...ok, signAssertion: false, signResponse: true });
  const stranger = testIdp(IDP.entityId, fixture("other"));
  const cases: [string, string | Promise<string>, string | RegExp, Partial<ResponseExpectations>?][] = [
    [
      "unsigned",
      assertionSigned.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, ""),
      "unsigned",
    ],
    [
      "wrong key (its certificate in KeyInfo)",
      stranger.respond(SP, ok),
      "signature invalid or not by the connection's certificates",
    ],
    [
      "tampered NameID",
      assertionSigned.replace("alice@acme.test", "mallory@acme.test"),
      "signature invalid or not by the connection's certificates",
    ],
    ...Object.entries(wrapped(assertionSigned, responseSigned)).map(([name, xml]) =>
      [name, xml, "2 assertions, 0 encrypted"] as [string, string, string]
    ),
    [
      "wrong audience",
      IDP.respond(SP, { ...ok, values: { Audience: "https://other.test/sp" } }),
      "audience mismatch",
    ],
    [
      "wrong destination",
      IDP.respond(SP, { ...ok, values: { Destination: "https://other.test/acs" } }),
      "destination mismatch",
    ],
    [
      "wrong recipient",
      IDP.respond(SP, { ...ok, values: { SubjectRecipient: "https://other.test/acs" } }),
      "recipient mismatch",
    ],
    ["wrong issuer", IDP.respond(SP, { ...ok, values: { Issuer: "https://evil.test" } }), /issuer mismatch/],
    ["expired", IDP.respond(SP, { ...ok, now: now - 3600_000 }), "subject confirmation expired"],
    [
      "conditions expired",
      IDP.respond(SP, {
        ...ok,
        values: { ConditionsNotOnOrAfter: new Date(now - 120_000).toISOString() },
      }),
      "expired",
    ],
    ["not yet valid", IDP.respond(SP, { ...ok, now: now + 3600_000 }), "not yet valid"],
    ["InResponseTo mismatch", IDP.respond(SP, { ...ok, requestId: "_other" }), "in_response_to mismatch"],
    [
      "unsolicited when a request is expected",
      IDP.respond(SP, { ...ok, requestId: null }),
      "in_response_to mismatch",
    ],
    [
      "DTD with an internal entity (billion laughs)",
      `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>${
        assertionSigned.replace("alice@acme.test", "&b;")
      }`,
      "DTD declared",
    ],
    [
      "external entity (XXE)",
      `<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>${
        assertionSigned.replace("alice@acme.test", "&x;")
      }`,
      "DTD declared",
    ],
    ["not XML", "<samlp:Response", /xml/],
    [
      "a plain assertion next to an encrypted one",
      assertionSigned.replace(
        "</samlp:Response>",
        `<saml:EncryptedAssertion xmlns:saml="${SAML}"/></samlp:Response>`,
      ),
      "1 assertions, 1 encrypted",
    ],
    [
      "two assertions",
      assertionSigned.replace(
        "</samlp:Response>",
        `<saml:Assertion xmlns:saml="${SAML}" ID="_second" Version="2.0"/></samlp:Response>`,
      ),
      "2 assertions, 0 encrypted",
    ],
    [
      "duplicate ID elsewhere",
      assertionSigned.replace(
        /<samlp:Status>/,
        (m) =>
          `<samlp:Extensions><x ID="${
            /<saml:Assertion[^>]* ID="([^"]+)"/.exec(assertionSigned)![1]
          }"/></samlp:Extensions>${m}`,
      ),
      "ID not unique in document",
    ],
    ["no certificate configured", assertionSigned, "connection has no certificate", { certificates: [] }],
  ];
  for (const [name, xml, reason, over] of cases) {
    await t.step(name, async () => {
      const got = await refusal(await xml, expectations(now, over));
      if (reason instanceof RegExp) assert.match(got, reason);
      else assert.equal(got, reason);
    });
  }
});
