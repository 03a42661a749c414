// `npm run openapi`: writes docs/openapi.json from the service's zod schemas (the same document
// the service serves at GET /v3/openapi.json; src/server/openapi.test.ts fails when they differ).
import { writeFileSync } from "node:fs";
import { buildOpenApiDocument } from "../src/server/http/openapi";

const file = new URL("../docs/openapi.json", import.meta.url);
writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${file.pathname}`);
