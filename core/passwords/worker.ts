/**
 * The Web Worker entry of the password pool (Deno, Bun, browsers): each message is a
 * `PasswordJobMessage`, each answer a `PasswordJobReply`.
 *
 * @module
 */
import { type PasswordJobMessage, replyToPasswordJob } from "./jobs.ts";

interface WorkerScope {
  onmessage: ((event: MessageEvent<PasswordJobMessage>) => void) | null;
  postMessage(message: unknown): void;
}

const scope = globalThis as unknown as WorkerScope;
scope.onmessage = async (event) => scope.postMessage(await replyToPasswordJob(event.data));
