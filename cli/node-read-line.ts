/**
 * One line from the terminal (or piped stdin) through `node:readline`, which Deno, Node and Bun
 * all carry: `svc admin create` asks for what its flags did not give. A secret is not echoed.
 *
 * @module
 */
import process from "node:process";
import { createInterface } from "node:readline";

/** Asks `question` on stderr and resolves to the answer, or null when stdin ends first. */
export function nodeReadLine(question: string, options: { secret?: boolean } = {}): Promise<string | null> {
  return new Promise((resolve) => {
    const rl = createInterface({
      input: process.stdin,
      output: process.stderr,
      terminal: process.stdin.isTTY,
    });
    let answered = false;
    let muted = false;
    if (options.secret) {
      // readline echoes typed characters through _writeToOutput; after the question, nothing is echoed.
      const writable = rl as unknown as { _writeToOutput(text: string): void };
      writable._writeToOutput = (text: string) => {
        if (!muted) process.stderr.write(text);
      };
    }
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      if (options.secret && process.stdin.isTTY) process.stderr.write("\n");
      resolve(answer);
    });
    muted = options.secret === true;
    rl.on("close", () => {
      if (!answered) resolve(null);
    });
  });
}
