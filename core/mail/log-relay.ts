/**
 * The development mail relay (issue 14): each message goes to the server log with its links, so
 * that a newcomer running svc on their machine sees their reset or invitation link at once.
 * It is the default when no SMTP server is configured and the base URL is local; bodies hold the
 * one secret each message delivers, so it is never the default anywhere else.
 *
 * @module
 */
import type { OutboxMessage } from "../storage/mail-outbox.ts";
import type { MailRelay } from "./delivery.ts";

/** The links (http and https URLs) of a plain-text body, in order, each once. */
export function linksOf(text: string): string[] {
  return [...new Set(text.match(/https?:\/\/[^\s<>"]+/g) ?? [])];
}

/** A relay that prints each message (header lines, links, then the text body indented) with `print`. */
export function createLogRelay(print: (line: string) => void): MailRelay {
  return {
    name: "log",
    deliver(message: OutboxMessage): Promise<void> {
      const links = linksOf(message.text);
      print(`mail: ${message.kind} to ${message.to} (id ${message.id}): ${message.subject}`);
      for (const link of links) print(`mail:   link: ${link}`);
      for (const line of message.text.trimEnd().split("\n")) print(`mail:   | ${line}`);
      return Promise.resolve();
    },
  };
}
