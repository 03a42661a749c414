// Test support: hostile and friendly zip archives, and a tiny composition to render.
export { buildZip, type ZipEntrySpec } from "../assets/zip-writer";

/** A 1920x1080 composition with a CSS animation, `seconds` long, declaring `variables`. */
export function compositionHtml(options: { seconds?: number; variables?: unknown[] } = {}): string {
  const seconds = options.seconds ?? 1;
  const variables = options.variables
    ? ` data-composition-variables='${JSON.stringify(options.variables).replace(/'/g, "&#39;")}'`
    : "";
  return `<!doctype html>
<html${variables}>
<head><meta charset="utf-8"><style>
  html, body { margin: 0; background: #102030; }
  #box { position: absolute; top: 400px; left: 0; width: 200px; height: 200px; background: #e0a020;
         animation: slide ${seconds}s linear forwards; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(1600px); } }
</style></head>
<body>
  <div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="${seconds}">
    <div id="box"></div>
  </div>
</body>
</html>
`;
}
