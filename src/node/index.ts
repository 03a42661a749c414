// `svc/node`: the Node-tier pieces a server built on svc uses (the preview-render template's file
// routes): the root guard, the Range answer and the loopback Host check of svc's own file servers
// (static-files.ts), so every svc server answers a file request the same way.
export {
  isLoopbackHostHeader,
  keepInsideRoot,
  rangeAnswer,
  resolveInsideRoot,
  type RangeAnswer,
} from "./static-files";
