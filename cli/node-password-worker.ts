/**
 * The `worker_threads` entry of the password pool on Node: the Node counterpart of
 * `core/passwords/worker.ts` (each message a `PasswordJobMessage`, each answer a
 * `PasswordJobReply`).
 *
 * @module
 */
import { parentPort } from "node:worker_threads";
import { type PasswordJobMessage, replyToPasswordJob } from "../core/passwords/jobs.ts";

if (!parentPort) throw new Error("cli/node-password-worker.ts runs only as a worker thread.");
const port = parentPort;
port.on(
  "message",
  async (message: PasswordJobMessage) => port.postMessage(await replyToPasswordJob(message)),
);
