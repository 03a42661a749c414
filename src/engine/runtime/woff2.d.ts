// Font files imported by the page runtime: esbuild inlines them as base64 text (PAGE_SCRIPT_BUILD).
declare module "*.woff2" {
  const base64: string;
  export default base64;
}
