import { strict as assert } from "node:assert";
import {
  checkReceiverUrl,
  isPrivateAddress,
  isReceiverAllowEntry,
  PUBLIC_RECEIVERS_ONLY,
} from "../../../core/webhooks/receivers.ts";

Deno.test("private, loopback, link-local and reserved addresses are refused by default", () => {
  for (
    const url of [
      "http://127.0.0.1/hook",
      "http://127.1.2.3:8080/",
      "http://localhost/",
      "http://api.localhost/",
      "http://10.0.0.1/",
      "http://172.16.5.4/",
      "http://192.168.1.1/",
      "http://169.254.169.254/latest/meta-data",
      "http://100.64.0.1/",
      "http://0.0.0.0/",
      "http://[::1]/",
      "http://[::]/",
      "http://[fd00::1]/",
      "http://[fe80::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:10.1.2.3]/",
      "http://2130706433/", // 127.0.0.1 as one number, normalized by the URL parser
      "http://0x7f.1/",
    ]
  ) assert.equal(checkReceiverUrl(url, PUBLIC_RECEIVERS_ONLY), "private_address", url);
});

Deno.test("public receivers pass; bad URLs are refused with their reason", () => {
  assert.equal(checkReceiverUrl("https://hooks.example.com/svc", PUBLIC_RECEIVERS_ONLY), null);
  assert.equal(checkReceiverUrl("http://93.184.216.34/", PUBLIC_RECEIVERS_ONLY), null);
  assert.equal(checkReceiverUrl("https://[2606:4700::1111]/", PUBLIC_RECEIVERS_ONLY), null);
  assert.equal(checkReceiverUrl("ftp://example.com/", PUBLIC_RECEIVERS_ONLY), "unsupported_scheme");
  assert.equal(checkReceiverUrl("https://u:p@example.com/", PUBLIC_RECEIVERS_ONLY), "credentials_in_url");
  assert.equal(checkReceiverUrl("not a url", PUBLIC_RECEIVERS_ONLY), "invalid_url");
  // A public name that resolves inward is refused when the resolution is given.
  assert.equal(
    checkReceiverUrl("https://evil.example/", PUBLIC_RECEIVERS_ONLY, ["10.0.0.5"]),
    "private_address",
  );
});

Deno.test("the allow-list admits host names, addresses and CIDR ranges", () => {
  const policy = { allowPrivate: ["127.0.0.0/8", "hooks.internal", "fd00::/8", "10.1.2.3"] };
  assert.equal(checkReceiverUrl("http://127.0.0.1:9999/", policy), null);
  assert.equal(checkReceiverUrl("http://hooks.internal/", policy), null);
  assert.equal(checkReceiverUrl("http://[fd00::5]/", policy), null);
  assert.equal(checkReceiverUrl("http://10.1.2.3/", policy), null);
  assert.equal(checkReceiverUrl("http://10.1.2.4/", policy), "private_address");
  assert.equal(checkReceiverUrl("http://localhost/", policy), "private_address");
  assert.equal(checkReceiverUrl("https://x.example/", policy, ["127.0.0.9"]), null);
  assert.equal(isPrivateAddress("8.8.8.8"), false);
  assert.equal(isReceiverAllowEntry("10.0.0.0/8"), true);
  assert.equal(isReceiverAllowEntry("10.0.0.0/33"), false);
  assert.equal(isReceiverAllowEntry("bad host!"), false);
});
