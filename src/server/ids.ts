// Public identifiers: a type prefix (asst_, rndr_, ...) plus 24 random base62 characters.
import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function randomToken(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = "";
  // Rejection sampling keeps every character equally likely (248 = 4 * 62).
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    const byte = bytes[i]!;
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out.length === length ? out : out + randomToken(length - out.length);
}

export function newId(prefix: string): string {
  return `${prefix}${randomToken(24)}`;
}
