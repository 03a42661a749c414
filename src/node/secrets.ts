// Comparing secrets (tokens, CSRF values, signatures) in constant time, so how long a refusal
// takes says nothing about how much of a guess was right. An empty value never matches.
import { timingSafeEqual } from "node:crypto";

export function sameSecret(expected: string | Buffer, given: string | Buffer | undefined): boolean {
  if (!given || given.length === 0 || expected.length === 0) return false;
  const left = Buffer.from(expected);
  const right = Buffer.from(given);
  return left.length === right.length && timingSafeEqual(left, right);
}
