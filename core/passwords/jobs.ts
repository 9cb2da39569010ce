/**
 * The work a password hasher does, as plain messages that cross a worker boundary
 * (structured-clone safe): hash with argon2id, or verify under a tag. `runPasswordJob`
 * does the work in the current thread; the worker entry points call it on each message.
 *
 * @module
 */
import type { Argon2idParams } from "./argon2-params.ts";
import { hashArgon2id } from "./argon2id.ts";
import { passwordAlgorithm } from "./registry.ts";

/** A job for a hasher. */
export type PasswordJob =
  | {
    readonly op: "hash";
    readonly password: string;
    readonly params: Argon2idParams;
    readonly salt: Uint8Array;
  }
  | { readonly op: "verify"; readonly tag: string; readonly hash: string; readonly password: string };

/** A job with its correlation id, as posted to a worker. */
export type PasswordJobMessage = PasswordJob & { readonly id: number };

/** A worker's answer. Errors travel as their code and message. */
export type PasswordJobReply =
  | { readonly id: number; readonly ok: true; readonly value: string | boolean }
  | { readonly id: number; readonly ok: false; readonly code?: string; readonly message: string };

/** Runs a job in the current thread. */
export async function runPasswordJob(job: PasswordJob): Promise<string | boolean> {
  if (job.op === "hash") return await hashArgon2id(job.password, job.params, job.salt);
  return await passwordAlgorithm(job.tag).verify(job.password, job.hash);
}

/** Runs a job and wraps the outcome as a reply (never throws). */
export async function replyToPasswordJob(message: PasswordJobMessage): Promise<PasswordJobReply> {
  try {
    return { id: message.id, ok: true, value: await runPasswordJob(message) };
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    return {
      id: message.id,
      ok: false,
      code: typeof code === "string" ? code : undefined,
      message: error instanceof Error ? error.message : String(error),
    };
  }
}
