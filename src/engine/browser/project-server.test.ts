import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProjectServer, wholeDocument, type ProjectServer } from "./project-server";

describe("wholeDocument", () => {
  it("leaves a document as it is and wraps a fragment as the reference does", () => {
    const page = "<!doctype html><html><body><div></div></body></html>";
    expect(wholeDocument(page)).toBe(page);
    expect(wholeDocument("\uFEFF  <html lang=en><body></body></html>")).toContain("<html lang=en>");
    const wrapped = wholeDocument('<div data-composition-id="main"></div>');
    expect(wrapped).toMatch(/^<!DOCTYPE html>/);
    expect(wrapped).toContain("*{margin:0;padding:0;box-sizing:border-box");
    expect(wrapped).toContain('<div data-composition-id="main"></div>\n</body>\n</html>');
  });
});

describe("startProjectServer", () => {
  let dir: string;
  let server: ProjectServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-project-server-"));
    await writeFile(join(dir, "index.html"), '<div data-composition-id="main"></div>');
    server = await startProjectServer(dir);
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("wraps a fragment page the browser opens, and serves it as it is to a fetch", async () => {
    const opened = await fetch(`${server.origin}/index.html`, {
      headers: { "sec-fetch-dest": "document" },
    });
    expect(await opened.text()).toMatch(/^<!DOCTYPE html>[\s\S]*data-composition-id="main"/);
    const fetched = await fetch(`${server.origin}/index.html`);
    expect(await fetched.text()).toBe('<div data-composition-id="main"></div>');
  });
});
