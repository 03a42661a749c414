// Serves a project folder to the page over a local origin (never file://), so fetch(), module
// scripts, fonts and sub-compositions behave as on a web server: the Node tier's one loopback
// file server (src/node/static-files.ts: paths kept inside the project, symlinks included; Range
// for media seeking; the Host check).
import { realpath } from "node:fs/promises";
import { resolve } from "node:path";
import { startStaticServer } from "../node/static-files";

export interface ProjectServer {
  origin: string;
  close(): Promise<void>;
}

export async function startProjectServer(projectDir: string): Promise<ProjectServer> {
  const { origin, close } = await startStaticServer(await realpath(resolve(projectDir)));
  return { origin, close };
}
