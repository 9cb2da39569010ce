/**
 * Encrypted assertions at the response validator, with SP keys made by svc's own generator:
 *
 * - samlify (`xml-encryption`) encrypting to the SP's certificate, with each allowed data
 *   algorithm, sign-then-encrypt (the assertion's own signature, inside the ciphertext) and
 *   encrypt-then-sign (the Response's signature over the `EncryptedAssertion`), and both;
 * - the tests' own encryptor: `xmlenc11#rsa-oaep` with SHA-256 and MGF1-SHA256, and the
 *   `EncryptedKey` next to the data behind a `RetrievalMethod`;
 * - rotation: an assertion encrypted to the previous key decrypts while it is active (several keys
 *   at once), not once it is retired; a stranger's key, no key;
 * - refused, each for its stable reason: RSA 1.5 and 3DES (samlify can produce both), OAEP with
 *   mismatched digest and mask hashes, an unsigned assertion encrypted to the SP's public
 *   certificate (anyone can make one), a plain assertion next to an encrypted one, an
 *   `EncryptedAssertion` swapped into a Response signed over another, a decrypted assertion
 *   holding a second one, a plain assertion where encryption is required;
 * - properties (fast-check): any byte flipped in a data or key `CipherValue` (GCM and CBC) is
 *   refused, never accepted; an assertion decrypts exactly when the key it was encrypted to is
 *   among the active ones, whatever the subset.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
// @ts-types="../../../plugins/saml/xmldom.d.ts"
import { DOMParser, XMLSerializer } from "@xmldom/xmldom";
import {
  type ResponseExpectations,
  SamlRefusedError,
  validateResponse,
} from "../../../plugins/saml/response.ts";
import { type DecryptionKey, decryptionKey, generateSpKey } from "../../../plugins/saml/sp-keys.ts";
import { encryptedAssertion, type HandEncryption } from "./encrypt.ts";
import { fixture, testIdp } from "./idp.ts";

// deno-lint-ignore no-explicit-any
type Dom = any;

const SP = { entityId: "https://svc.test/saml/c1/metadata", acsUrl: "https://svc.test/saml/c1/acs" };
const IDP = testIdp();
const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
const XENC = "http://www.w3.org/2001/04/xmlenc#";
const XENC11 = "http://www.w3.org/2009/xmlenc11#";

const now = Date.now();
const [current, previous, stranger] = await Promise.all(
  [1, 2, 3].map((i) => generateSpKey(`test ${i}`, now, new Uint8Array(16).fill(i))),
);
const keyOf = (k: { pkcs8: Uint8Array }, id: string) => decryptionKey(id, k.pkcs8);

function expectations(keys: DecryptionKey[], over: Partial<ResponseExpectations> = {}): ResponseExpectations {
  return {
    spEntityId: SP.entityId,
    acsUrl: SP.acsUrl,
    idpEntityId: IDP.entityId,
    certificates: [fixture("idp").cert],
    requestId: "_req1",
    now,
    skewMs: 60_000,
    decryptionKeys: () => Promise.resolve(keys),
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

const ok = { requestId: "_req1", nameId: "alice@acme.test", now, attributes: { email: "alice@acme.test" } };
const parse = (xml: string): Dom => new DOMParser().parseFromString(xml, "text/xml");
const serialize = (node: Dom) => new XMLSerializer().serializeToString(node);

/** Replaces the response's assertion by its encryption with the tests' encryptor. */
function handEncrypt(responseXml: string, options: HandEncryption, edit?: (assertion: Dom) => void): string {
  const doc = parse(responseXml);
  const assertion = doc.getElementsByTagNameNS(SAML, "Assertion")[0];
  edit?.(assertion);
  const encrypted = parse(encryptedAssertion(serialize(assertion), options)).documentElement;
  doc.documentElement.replaceChild(doc.importNode(encrypted, true), assertion);
  return serialize(doc);
}

Deno.test("encrypted assertions from samlify and by hand are accepted", async (t) => {
  const keys = [keyOf(current, "k1")];
  for (
    const [name, data] of [
      ["aes256-gcm", `${XENC11}aes256-gcm`],
      ["aes128-gcm", `${XENC11}aes128-gcm`],
      ["aes256-cbc", `${XENC}aes256-cbc`],
      ["aes128-cbc", `${XENC}aes128-cbc`],
    ]
  ) {
    await t.step(`samlify, assertion signed then encrypted, ${name}`, async () => {
      const xml = await IDP.respond(SP, { ...ok, encrypt: { cert: current.certificate, data } });
      assert.match(xml, /EncryptedAssertion/);
      assert.doesNotMatch(xml, /alice@acme\.test/);
      const result = await validateResponse(xml, expectations(keys));
      assert.equal(result.nameId, "alice@acme.test");
      assert.equal(result.encrypted, true);
      assert.deepEqual(result.attributes.email, ["alice@acme.test"]);
    });
  }
  await t.step("samlify, encrypt then sign the Response (assertion unsigned)", async () => {
    const xml = await IDP.respond(SP, {
      ...ok,
      signAssertion: false,
      signResponse: true,
      encrypt: { cert: current.certificate, encryptThenSign: true },
    });
    assert.equal((await validateResponse(xml, expectations(keys))).nameId, "alice@acme.test");
  });
  await t.step("samlify, assertion signed, encrypted, Response signed over the ciphertext", async () => {
    const xml = await IDP.respond(SP, {
      ...ok,
      signAssertion: true,
      signResponse: true,
      encrypt: { cert: current.certificate, encryptThenSign: true },
    });
    assert.equal((await validateResponse(xml, expectations(keys))).nameId, "alice@acme.test");
  });
  await t.step("rsa-oaep with SHA-256 and MGF1-SHA256, key next to the data", async () => {
    const signed = await IDP.respond(SP, ok);
    for (const detachedKey of [false, true]) {
      const xml = handEncrypt(signed, { cert: current.certificate, detachedKey });
      assert.equal((await validateResponse(xml, expectations(keys))).nameId, "alice@acme.test");
    }
    // xmlenc11#rsa-oaep with its SHA-1 defaults (no DigestMethod, no MGF), AES-128-CBC.
    const sha1 = handEncrypt(signed, {
      cert: current.certificate,
      digest: null,
      mgf: null,
      dataAlgorithm: `${XENC}aes128-cbc`,
    });
    assert.equal((await validateResponse(sha1, expectations(keys))).nameId, "alice@acme.test");
  });
});

Deno.test("rotation: the previous key decrypts while active, not once retired", async () => {
  const toPrevious = await IDP.respond(SP, { ...ok, encrypt: { cert: previous.certificate } });
  const both = [keyOf(current, "k-new"), keyOf(previous, "k-old")];
  assert.equal((await validateResponse(toPrevious, expectations(both))).nameId, "alice@acme.test");
  const toCurrent = await IDP.respond(SP, { ...ok, encrypt: { cert: current.certificate } });
  assert.equal((await validateResponse(toCurrent, expectations(both))).nameId, "alice@acme.test");
  // Retired: only the new key is left.
  assert.equal(
    await refusal(toPrevious, expectations([keyOf(current, "k-new")])),
    "decryption: no SP key decrypts the assertion",
  );
  assert.equal(
    (await validateResponse(toCurrent, expectations([keyOf(current, "k-new")]))).nameId,
    "alice@acme.test",
  );
});

Deno.test("refused encrypted responses, each for its reason", async (t) => {
  const keys = [keyOf(current, "k1")];
  const signed = await IDP.respond(SP, ok);
  const unsignedPlain = await IDP.respond(SP, { ...ok, signAssertion: false, signResponse: true });
  const responseSigned = await IDP.respond(SP, {
    ...ok,
    signAssertion: false,
    signResponse: true,
    encrypt: { cert: current.certificate, encryptThenSign: true },
  });
  const assertionSigned = await IDP.respond(SP, { ...ok, encrypt: { cert: current.certificate } });
  const attacker = handEncrypt(
    signed.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, ""),
    { cert: current.certificate },
    (a) => a.getElementsByTagNameNS(SAML, "NameID")[0].textContent = "mallory@acme.test",
  );
  const attackerEncrypted = /<saml:EncryptedAssertion[\s\S]*<\/saml:EncryptedAssertion>/.exec(attacker)![0];
  const cases: [string, string | Promise<string>, string, Partial<ResponseExpectations>?][] = [
    [
      "encrypted to a stranger's key",
      IDP.respond(SP, { ...ok, encrypt: { cert: stranger.certificate } }),
      "decryption: no SP key decrypts the assertion",
    ],
    [
      "the connection has no SP key",
      assertionSigned,
      "decryption: encrypted assertion but the connection has no SP key",
      { decryptionKeys: () => Promise.resolve([]) },
    ],
    [
      "RSA 1.5 key transport (samlify)",
      IDP.respond(SP, {
        ...ok,
        encrypt: { cert: current.certificate, key: `${XENC}rsa-1_5` },
      }),
      "decryption: key transport algorithm not allowed",
    ],
    [
      "3DES data (samlify)",
      IDP.respond(SP, {
        ...ok,
        encrypt: { cert: current.certificate, data: `${XENC}tripledes-cbc` },
      }),
      "decryption: data encryption algorithm not allowed",
    ],
    [
      "OAEP SHA-256 digest with MGF1-SHA1",
      handEncrypt(signed, { cert: current.certificate, mgf: `${XENC11}mgf1sha1` }),
      "decryption: key transport digest or mask function not allowed",
    ],
    ["an unsigned assertion encrypted to the SP's certificate", attacker, "unsigned"],
    [
      "a plain signed assertion next to the encrypted one (XSW)",
      assertionSigned.replace(
        "</samlp:Response>",
        `${/<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signed)![0]}</samlp:Response>`,
      ),
      "1 assertions, 1 encrypted",
    ],
    [
      "a second encrypted assertion",
      assertionSigned.replace("</samlp:Response>", `${attackerEncrypted}</samlp:Response>`),
      "0 assertions, 2 encrypted",
    ],
    [
      "an encrypted assertion swapped into a Response signed over another",
      responseSigned.replace(/<saml:EncryptedAssertion[\s\S]*<\/saml:EncryptedAssertion>/, attackerEncrypted),
      "signature invalid or not by the connection's certificates",
    ],
    [
      "an encrypted assertion inside the Status (wrapping)",
      unsignedPlain.replace(/<saml:Assertion[\s\S]*<\/saml:Assertion>/, "").replace(
        "</samlp:Status>",
        `<samlp:StatusDetail>${attackerEncrypted}</samlp:StatusDetail></samlp:Status>`,
      ),
      "assertion not a child of the Response",
    ],
    [
      "a decrypted assertion holding a second assertion",
      handEncrypt(signed, { cert: current.certificate }, (a) => {
        const advice = a.ownerDocument.createElementNS(SAML, "saml:Advice");
        advice.appendChild(a.cloneNode(true));
        a.appendChild(advice);
      }),
      "decrypted assertion holds another assertion",
    ],
    [
      "a decrypted assertion with two signatures",
      handEncrypt(signed, { cert: current.certificate }, (a) => {
        const signature = a.getElementsByTagNameNS("http://www.w3.org/2000/09/xmldsig#", "Signature")[0];
        a.appendChild(signature.cloneNode(true));
      }),
      "more than one Signature",
    ],
    [
      "a plain assertion where encryption is required",
      signed,
      "assertion not encrypted",
      { requireEncrypted: true },
    ],
  ];
  for (const [name, xml, reason, over] of cases) {
    await t.step(name, async () => {
      assert.equal(await refusal(await xml, expectations(keys, over)), reason);
    });
  }
  await t.step("required encryption accepts an encrypted one", async () => {
    const result = await validateResponse(assertionSigned, expectations(keys, { requireEncrypted: true }));
    assert.equal(result.nameId, "alice@acme.test");
  });
});

Deno.test("property: a tampered EncryptedAssertion is refused, never accepted or crashing", async () => {
  const keys = [keyOf(current, "k1")];
  const samples = await Promise.all(
    [`${XENC11}aes256-gcm`, `${XENC}aes256-cbc`].map((data) =>
      IDP.respond(SP, { ...ok, encrypt: { cert: current.certificate, data } })
    ),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: samples.length - 1 }),
      fc.constantFrom(0, 1),
      fc.nat(),
      fc.integer({ min: 1, max: 255 }),
      async (sample, which, at, flip) => {
        const xml = samples[sample];
        // The key's CipherValue (in the EncryptedKey) and the data's, whatever their prefixes.
        const values = [...xml.matchAll(/<((?:\w+:)?)CipherValue>([^<]+)<\/(?:\w+:)?CipherValue>/g)];
        assert.equal(values.length, 2);
        const target = values[which];
        const bytes = Uint8Array.from(atob(target[2].replace(/\s+/g, "")), (ch) => ch.charCodeAt(0));
        bytes[at % bytes.length] ^= flip;
        const tampered = xml.slice(0, target.index!) +
          `<${target[1]}CipherValue>${btoa(String.fromCharCode(...bytes))}</${target[1]}CipherValue>` +
          xml.slice(target.index! + target[0].length);
        const reason = await refusal(tampered, expectations(keys));
        assert.ok(reason.length > 0);
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("property: an assertion decrypts exactly when its key is among the active ones", async () => {
  const all = [current, previous, stranger];
  const encrypted = await Promise.all(
    all.map((key) => IDP.respond(SP, { ...ok, encrypt: { cert: key.certificate } })),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.subarray([0, 1, 2]),
      fc.integer({ min: 0, max: 2 }),
      async (active, to) => {
        const keys = active.map((i) => keyOf(all[i], `k${i}`));
        if (active.includes(to)) {
          assert.equal((await validateResponse(encrypted[to], expectations(keys))).nameId, "alice@acme.test");
        } else {
          const reason = await refusal(encrypted[to], expectations(keys));
          assert.match(
            reason,
            /^decryption: (no SP key decrypts|encrypted assertion but the connection has no SP key)/,
          );
        }
      },
    ),
    { numRuns: 30 },
  );
});
