/**
 * Authenticator responses recorded from Chromium's virtual authenticators by
 * `test/fixtures/passkeys/record.ts` (see there), typed.
 */
import type { AuthenticationResponse, RegistrationResponse } from "../../../core/passkeys/service.ts";

/** One recorded ceremony answer: the challenge it signed and the browser's JSON. */
export interface Recorded<R> {
  readonly challenge: string;
  readonly response: R;
}

/** The recorded fixture. */
export interface RecordedPasskeys {
  readonly rpId: string;
  readonly origin: string;
  readonly userVerifying: {
    readonly userId: string;
    readonly registration: Recorded<RegistrationResponse>;
    /** Sign counts 2 and 3 (the registration's is 1). */
    readonly assertions: readonly Recorded<AuthenticationResponse>[];
    /** The credential copied into a second authenticator at 0: sign count 1. */
    readonly cloneAssertion: Recorded<AuthenticationResponse>;
  };
  readonly withoutUserVerification: {
    readonly userId: string;
    readonly registration: Recorded<RegistrationResponse>;
    readonly assertion: Recorded<AuthenticationResponse>;
  };
}

/** `test/fixtures/passkeys/responses.json`. */
export const recorded: RecordedPasskeys = JSON.parse(
  await Deno.readTextFile(new URL("../../fixtures/passkeys/responses.json", import.meta.url)),
);
