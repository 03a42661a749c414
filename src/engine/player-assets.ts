// What a web server needs to serve <svc-player> (`svc/player-assets` in package.json `exports`):
// the player's ES module and the answers under its `library-base` (the CDN files svc has copies
// of, `libraryResponse`). Apart from `svc/engine` so that a process that only serves previews
// does not load the browser automation library.
export { playerModule } from "./bundles/player-bundle";
export { libraryResponse } from "../node/index";
export { cdnAllowlist, cdnAllowlistAllows, type CdnAllowlist } from "../shared/cdn";
