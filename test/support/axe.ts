/**
 * Page checks for browser tests: a full-page screenshot in `.tmp/screens/account-<name>.png`,
 * then axe-core (from node_modules, injected into the page: no CDN) with no serious or critical
 * violation allowed.
 *
 * @module
 */
import { strict as assert } from "node:assert";
import type { Page } from "playwright-core";
import { REPO_ROOT } from "./browser.ts";

const AXE_PATH = `${REPO_ROOT}node_modules/axe-core/axe.min.js`;
const SCREENS = `${REPO_ROOT}.tmp/screens`;
let axeSource: string | null = null;

/** Screenshots `page` as `account-<name>.png` and fails on a serious or critical axe-core violation. */
export async function checkPage(page: Page, name: string): Promise<void> {
  axeSource ??= await Deno.readTextFile(AXE_PATH);
  await Deno.mkdir(SCREENS, { recursive: true });
  await page.screenshot({ path: `${SCREENS}/account-${name}.png`, fullPage: true });
  await page.evaluate(axeSource);
  const violations: { id: string; impact: string; nodes: number }[] = await page.evaluate(
    `axe.run(document, { resultTypes: ["violations"] }).then((result) =>
      result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))`,
  );
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(serious, [], `${name}: ${JSON.stringify(violations)}`);
}
