/**
 * Splits a stream of text chunks into lines, one at a time, holding at most one line (up to a
 * limit) in memory: the reader of newline-delimited exports.
 *
 * @module
 */

/** One line of a stream: its 1-based number and text (without the line break), or `overlong`. */
export type StreamLine =
  | { readonly number: number; readonly text: string; readonly overlong?: false }
  | { readonly number: number; readonly overlong: true };

/** The longest line kept (characters); a longer one is reported `overlong` and dropped. */
export const MAX_LINE_CHARS = 1024 * 1024;

/** The lines of `chunks` (`\n` or `\r\n` breaks); a final line without a break counts too. */
export async function* splitLines(
  chunks: AsyncIterable<string> | Iterable<string>,
  maxLineChars: number = MAX_LINE_CHARS,
): AsyncGenerator<StreamLine> {
  let pending = "";
  let number = 0;
  let dropping = false;
  for await (const chunk of chunks) {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf("\n", start);
      if (end === -1) break;
      number++;
      const part = chunk.slice(start, end);
      start = end + 1;
      if (dropping || pending.length + part.length > maxLineChars) {
        yield { number, overlong: true };
      } else {
        yield { number, text: stripCr(pending + part) };
      }
      pending = "";
      dropping = false;
    }
    if (start < chunk.length && !dropping) {
      pending += chunk.slice(start);
      if (pending.length > maxLineChars) {
        pending = "";
        dropping = true;
      }
    }
  }
  if (dropping) yield { number: number + 1, overlong: true };
  else if (pending !== "") yield { number: number + 1, text: stripCr(pending) };
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/** Decodes a byte stream as UTF-8 text chunks (invalid bytes become U+FFFD). */
export async function* decodeUtf8(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  for await (const chunk of bytes) {
    const text = decoder.decode(chunk, { stream: true });
    if (text !== "") yield text;
  }
  const rest = decoder.decode();
  if (rest !== "") yield rest;
}
