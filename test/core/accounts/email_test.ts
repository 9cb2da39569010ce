/**
 * `normalizeEmail` (core/accounts/email.ts): idempotent on any string; the NFC, NFD,
 * fullwidth, upper-case, padded and trailing-dot spellings of one address normalize to one
 * value, which is a usable address with an ASCII domain; addresses as svc stored them before
 * (trimmed, lowercased ASCII) are unchanged.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import * as v from "valibot";
import {
  EmailAddressSchema,
  EmailLookupSchema,
  isEmailAddress,
  normalizeEmail,
} from "../../../core/accounts/email.ts";

/** Letters with and without diacritics (no ß or dotless i, whose case mapping is not one to one). */
const LETTERS = [..."abcdefghijklmnopqrstuvwxyz0123456789", "é", "ü", "ñ", "å", "ø", "ç", "ä", "ö", "ê"];
const ASCII_LETTERS = [..."abcdefghijklmnopqrstuvwxyz0123456789"];
const word = (alphabet: string[]) =>
  fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 12 }).map((a) => a.join(""));
const localPart = fc.array(word(LETTERS), { minLength: 1, maxLength: 3 }).map((w) => w.join("."));
/** A top-level label of letters (WHATWG reads a host whose last label is a number as IPv4). */
const tld = fc.array(fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz"), { minLength: 2, maxLength: 6 })
  .map((a) => a.join(""));
const domain = fc.tuple(fc.array(word(LETTERS), { minLength: 1, maxLength: 3 }), tld)
  .map(([labels, tld]) => [...labels, tld].join("."));
const address = fc.tuple(localPart, domain).map(([l, d]) => `${l}@${d}`);

/** ASCII letters, digits, `@` and `.` in their fullwidth forms (U+FF01…U+FF5E). */
const fullwidth = (s: string) =>
  s.replace(/[!-~]/g, (c) => String.fromCodePoint(c.codePointAt(0)! - 0x21 + 0xff01));

Deno.test("normalizeEmail: idempotent on any string", () => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), address), (s) => {
      const once = normalizeEmail(s);
      assert.equal(normalizeEmail(once), once);
    }),
    { numRuns: 500 },
  );
});

Deno.test("normalizeEmail: NFC, NFD, fullwidth, case, padding and a trailing dot are one address", () => {
  fc.assert(
    fc.property(address, fc.constantFrom(" ", "\t", "\u3000", ""), (a, pad) => {
      const canonical = normalizeEmail(a);
      const variants = [
        a.normalize("NFC"),
        a.normalize("NFD"),
        fullwidth(a),
        fullwidth(a.normalize("NFD")),
        a.toUpperCase(),
        `${a}.`,
        `${fullwidth(a)}．`,
        `${pad}${a.toUpperCase().normalize("NFD")}.${pad}`,
      ];
      for (const variant of variants) {
        assert.equal(normalizeEmail(variant), canonical, JSON.stringify(variant));
      }
      assert.ok(isEmailAddress(canonical), canonical);
      const domainPart = canonical.slice(canonical.lastIndexOf("@") + 1);
      assert.match(domainPart, /^[a-z0-9.-]+$/, "the domain is IDNA ASCII");
      assert.ok(!domainPart.endsWith("."));
      assert.equal(canonical, canonical.normalize("NFKC"));
      assert.equal(v.parse(EmailAddressSchema, fullwidth(a)), canonical);
      assert.equal(v.parse(EmailLookupSchema, `${a}.`), canonical);
    }),
    { numRuns: 500 },
  );
});

Deno.test("normalizeEmail: a stored address (trimmed, lowercased ASCII) is unchanged", () => {
  const asciiAddress = fc.tuple(
    fc.array(word(ASCII_LETTERS), { minLength: 1, maxLength: 3 }).map((w) => w.join(".")),
    fc.array(word(ASCII_LETTERS), { minLength: 2, maxLength: 3 }).map((w) => w.join(".")),
  ).map(([l, d]) => `${l}@${d}`);
  fc.assert(fc.property(asciiAddress, (a) => assert.equal(normalizeEmail(a), a)), { numRuns: 500 });
});

Deno.test("normalizeEmail: the four spellings found in review", () => {
  assert.equal(normalizeEmail("café@example.test"), "café@example.test");
  assert.equal(normalizeEmail("cafe\u0301@example.test"), "café@example.test");
  assert.equal(normalizeEmail("ａｄｍｉｎ@example.test"), "admin@example.test");
  assert.equal(normalizeEmail("admin@example.test."), "admin@example.test");
  assert.equal(normalizeEmail(" Ada@Bücher.Example "), "ada@xn--bcher-kva.example");
  assert.equal(normalizeEmail("a@例え.テスト"), "a@xn--r8jz45g.xn--zckzah");
  // Never a throw; what the host parser refuses stays as it is and is no address.
  assert.equal(normalizeEmail("a@exa mple"), "a@exa mple");
  assert.equal(isEmailAddress(normalizeEmail("a@exa mple")), false);
  assert.equal(isEmailAddress(normalizeEmail("a@.")), false);
  assert.equal(v.safeParse(EmailAddressSchema, "a@.").success, false);
});
