#!/usr/bin/env node
// The `svc` command. Runs the TypeScript sources directly through tsx, so `npx svc` works right
// after `npm install` with no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
