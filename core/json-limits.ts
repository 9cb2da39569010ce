/**
 * Limits on the shape of untrusted JSON: how deeply objects and arrays nest, and how many
 * members (items or keys) one object or array holds. Both checks run without recursion, so no
 * input can overflow the stack while being checked.
 *
 * {@link jsonTextBreach} scans JSON text before it is parsed (request bodies, import lines);
 * {@link jsonValueBreach} walks an already parsed value (import items built by code).
 *
 * @module
 */

/** The shape limits of a JSON document. */
export interface JsonLimits {
  /** Most levels of nested objects and arrays (`{}` is 1 level, `[{}]` 2; a scalar is 0). */
  readonly maxDepth: number;
  /** Most members of one object (keys) or array (items). */
  readonly maxMembers: number;
}

/**
 * The default limits: 160 levels (room for the deepest grant condition, 64 levels of `and`/`or` at two JSON
 * levels each, inside a request body), 1000 members per object or array.
 */
export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 160, maxMembers: 1000 };

/** Which limit a document breaks, with a sentence saying so. */
export interface JsonLimitBreach {
  /** `depth`: nested too deeply; `members`: an object or array is too wide. */
  readonly limit: "depth" | "members";
  /** A sentence naming the limit, such as "The JSON is nested more than 32 levels deep." */
  readonly message: string;
}

function depthBreach(limits: JsonLimits): JsonLimitBreach {
  return { limit: "depth", message: `The JSON is nested more than ${limits.maxDepth} levels deep.` };
}

function membersBreach(limits: JsonLimits): JsonLimitBreach {
  return {
    limit: "members",
    message: `A JSON object or array has more than ${limits.maxMembers} members.`,
  };
}

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c;
const OPEN_ARRAY = 0x5b, CLOSE_ARRAY = 0x5d, OPEN_OBJECT = 0x7b, CLOSE_OBJECT = 0x7d;

/**
 * The limit JSON `text` breaks, or null when it keeps both. One pass over the text, strings
 * skipped whole; it stops at the first breach, so a hostile document costs no more than its
 * allowed prefix. Text that is not JSON is not judged (the parser reports it): the answer for it
 * only counts brackets and commas outside strings.
 */
export function jsonTextBreach(text: string, limits: JsonLimits): JsonLimitBreach | null {
  const { maxDepth, maxMembers } = limits;
  // Commas seen in the open container of each level: members = commas + 1.
  const commas = new Int32Array(maxDepth + 2);
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === QUOTE) {
      i = closingQuote(text, i);
    } else if (ch === OPEN_OBJECT || ch === OPEN_ARRAY) {
      if (++depth > maxDepth) return depthBreach(limits);
      commas[depth] = 0;
    } else if (ch === CLOSE_OBJECT || ch === CLOSE_ARRAY) {
      if (depth > 0) depth--;
    } else if (ch === COMMA && depth > 0) {
      if (++commas[depth] >= maxMembers) return membersBreach(limits);
    }
  }
  return null;
}

/** The index of the quote closing the string opened at `open` (the text's length when unclosed). */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}

/**
 * The limit a parsed JSON value breaks, or null when it keeps both: the same limits as
 * {@link jsonTextBreach} on the value's JSON text, walked with an explicit stack.
 */
export function jsonValueBreach(value: unknown, limits: JsonLimits): JsonLimitBreach | null {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: item, depth } = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth + 1 > limits.maxDepth) return depthBreach(limits);
    const members = Array.isArray(item) ? item : Object.values(item);
    if (members.length > limits.maxMembers) return membersBreach(limits);
    for (const member of members) {
      if (typeof member === "object" && member !== null) stack.push({ value: member, depth: depth + 1 });
    }
  }
  return null;
}
