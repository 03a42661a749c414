// Provided at bundle time by src/engine/bundles/player-bundle.ts (and electron.vite.config.ts for the
// desktop renderer): the page runtime followed by the frame bridge, as one classic script to
// inline into the composition frame.
declare module "svc:frame-script" {
  const source: string;
  export default source;
}
