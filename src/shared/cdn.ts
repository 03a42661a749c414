// Well-known CDN URLs of animation libraries that svc answers from its own copy, so renders and
// previews work offline and always use the same bytes. Used by the engine's network policy and
// by <svc-player> when it builds a preview frame.

const GSAP_CDN_PATTERNS: RegExp[] = [
  /^https?:\/\/cdn\.jsdelivr\.net\/npm\/gsap(?:@[^/]+)?\/dist\/([\w.-]+\.js)$/,
  /^https?:\/\/unpkg\.com\/gsap(?:@[^/]+)?\/dist\/([\w.-]+\.js)$/,
  /^https?:\/\/cdnjs\.cloudflare\.com\/ajax\/libs\/gsap\/[^/]+\/([\w.-]+\.js)$/,
];

/** The file name in gsap/dist that answers a CDN URL, or undefined when the URL is not one. */
export function gsapDistFileForUrl(url: string): string | undefined {
  const bare = url.split(/[?#]/)[0]!;
  for (const pattern of GSAP_CDN_PATTERNS) {
    const match = pattern.exec(bare);
    if (match) return match[1];
  }
  return undefined;
}
