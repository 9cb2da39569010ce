/**
 * The CAPTCHA widget the abuse gate may demand at sign-in and sign-up (`captcha_required` with
 * `details.provider` and `details.siteKey`). Each provider's widget is its own remote script (no
 * provider offers one to self-host), so the page loads it from the provider's origin, which the
 * server's CSP allows on these pages only when that provider is configured. Explicit rendering:
 * the widget goes into a container and hands its token to `onToken`, sent back as `captchaToken`.
 *
 * @module
 */

/** A provider the gate names, and how its widget is loaded and rendered. */
const PROVIDERS: Record<string, { script: string; global: string }> = {
  turnstile: {
    script: "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit",
    global: "turnstile",
  },
  hcaptcha: { script: "https://js.hcaptcha.com/1/api.js?render=explicit", global: "hcaptcha" },
  recaptcha: { script: "https://www.google.com/recaptcha/api.js?render=explicit", global: "grecaptcha" },
};

/** What `captcha_required` carries. */
export interface CaptchaDemand {
  readonly provider: string;
  readonly siteKey: string | null;
}

/** The demand of an answer's `error.details`, or null when it is not a usable one. */
export function captchaDemand(details: unknown): CaptchaDemand | null {
  const d = details as { provider?: unknown; siteKey?: unknown } | null;
  if (!d || typeof d.provider !== "string" || !(d.provider in PROVIDERS)) return null;
  if (typeof d.siteKey !== "string" || d.siteKey === "") return null;
  return { provider: d.provider, siteKey: d.siteKey };
}

const loaded = new Map<string, Promise<void>>();

function load(src: string): Promise<void> {
  let promise = loaded.get(src);
  if (promise === undefined) {
    promise = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.async = true;
      script.onload = () => resolve();
      script.onerror = () => {
        loaded.delete(src);
        reject(new Error("the CAPTCHA widget did not load"));
      };
      document.head.append(script);
    });
    loaded.set(src, promise);
  }
  return promise;
}

/** Loads the provider's widget and renders it into `container`; `onToken` gets each solved token. */
export async function renderCaptcha(
  demand: CaptchaDemand,
  container: HTMLElement,
  onToken: (token: string) => void,
): Promise<void> {
  const provider = PROVIDERS[demand.provider];
  await load(provider.script);
  const api = (globalThis as Record<string, any>)[provider.global];
  if (!api || typeof api.render !== "function") throw new Error("the CAPTCHA widget did not start");
  container.replaceChildren();
  api.render(container, { sitekey: demand.siteKey, callback: (token: string) => onToken(token) });
}
