// The documentation site: `npm run docs:build` renders docs/ into dist/docs with VitePress, and
// fails on a link to a page that does not exist (CI runs it).
import { defineConfig } from "vitepress";

export default defineConfig({
  title: "svc",
  description: "An identity and authorization server in TypeScript",
  outDir: "../dist/docs",
  cleanUrls: true,
  lastUpdated: false,
  themeConfig: {
    search: { provider: "local" },
    sidebar: [
      {
        text: "Start",
        items: [{ text: "Overview", link: "/" }, { text: "Getting started", link: "/getting-started" }],
      },
      {
        text: "Concepts",
        items: [
          { text: "The authorization model", link: "/concepts/authorization" },
          { text: "Tokens, sessions and credentials", link: "/concepts/tokens-and-sessions" },
        ],
      },
      {
        text: "Guides",
        items: [
          { text: "Sign-in and account flows", link: "/guides/sign-in" },
          { text: "Passkeys", link: "/guides/passkeys" },
          { text: "The admin API", link: "/guides/admin-api" },
          { text: "The admin console", link: "/guides/console" },
          { text: "Mail and account pages", link: "/guides/mail-and-account-pages" },
          { text: "Webhooks", link: "/guides/webhooks" },
          { text: "Impersonation and break-glass", link: "/guides/impersonation-and-break-glass" },
          { text: "Imports and shadow mode", link: "/guides/imports" },
          { text: "Plugins", link: "/guides/plugins" },
          { text: "SAML 2.0 single sign-on", link: "/guides/saml" },
          { text: "DPoP: sender-constrained tokens", link: "/guides/dpop" },
          { text: "SCIM 2.0 directory sync", link: "/guides/scim" },
          {
            text: "OIDC back-channel logout, refresh grace and apps",
            link: "/guides/oidc-backchannel-logout",
          },
          { text: "The OpenID Connect provider", link: "/guides/oidc-provider" },
          { text: "The single binary", link: "/guides/binary" },
          { text: "Scale-out on Postgres", link: "/guides/scale-out" },
          { text: "svc as a library", link: "/guides/library" },
        ],
      },
      {
        text: "Operations",
        items: [
          { text: "Configuration", link: "/operations/configuration" },
          { text: "Metrics, logs, traces", link: "/operations/observability" },
          { text: "Footprint", link: "/operations/footprint" },
          { text: "Where the memory goes", link: "/operations/memory" },
        ],
      },
      { text: "Security", items: [{ text: "Guarantees and their tests", link: "/security" }] },
      {
        text: "Reference",
        items: [
          { text: "Overview", link: "/reference/" },
          { text: "Settings", link: "/reference/settings" },
          { text: "The svc command", link: "/reference/cli" },
          { text: "Event kinds", link: "/reference/events" },
          { text: "Error codes", link: "/reference/errors" },
          { text: "HTTP API", link: "/reference/admin-api" },
        ],
      },
      { text: "Benchmarks", items: [{ text: "Figures", link: "/benchmarks" }] },
    ],
  },
});
