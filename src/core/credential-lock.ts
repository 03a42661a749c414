// The lock around refreshing an OAuth sign-in, shared by every svc process on this computer (CLI
// commands, the desktop app). Refresh tokens rotate, and presenting a rotated one again revokes
// the whole sign-in, so two processes that both find the access token expired must not both
// refresh: the one that gets the lock refreshes, the other waits, re-reads the store and uses the
// new tokens. The lock is a file created with O_EXCL next to the credentials file; a lock older
// than 30 s belongs to a process that died mid-refresh (a refresh takes one HTTP request) and is
// taken over.
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { ClientError, interruptedError } from "./errors";

export const LOCK_STALE_MS = 30_000;

export interface CredentialLockOptions {
  /** A lock older than this is taken over (default 30 s). */
  staleMs?: number;
  /** How often a waiting process looks again (default 50 ms). */
  pollMs?: number;
  signal?: AbortSignal;
  /** Told each time the lock was found held by someone else. */
  onBusy?: () => void;
}

/** Runs `action` while holding the lock file `lockFile`, waiting for another holder first. */
export async function withCredentialLock<T>(
  lockFile: string,
  action: () => Promise<T>,
  options: CredentialLockOptions = {},
): Promise<T> {
  const owner = await acquire(lockFile, options);
  try {
    return await action();
  } finally {
    await release(lockFile, owner);
  }
}

async function acquire(lockFile: string, options: CredentialLockOptions): Promise<string> {
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const pollMs = options.pollMs ?? 50;
  const owner = `${process.pid} ${randomBytes(8).toString("hex")}`;
  await mkdir(dirname(lockFile), { recursive: true, mode: 0o700 });
  // Past this the holder kept the lock fresh for a whole stale period again: something is wrong.
  const deadline = Date.now() + 2 * staleMs + 5_000;
  for (;;) {
    if (options.signal?.aborted) throw interruptedError();
    try {
      const handle = await open(lockFile, "wx", 0o600);
      try {
        await handle.writeFile(owner);
      } finally {
        await handle.close();
      }
      return owner;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    options.onBusy?.();
    const held = await stat(lockFile).catch(() => undefined);
    if (held && Date.now() - held.mtimeMs > staleMs) {
      await rm(lockFile, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new ClientError(
        "credentials_locked",
        `Another svc process has been refreshing the sign-in for too long (${lockFile} is held).`,
        `If no other svc is running, remove ${lockFile} and try again.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Removes the lock only while it is still ours (it may have been taken over as stale). */
async function release(lockFile: string, owner: string): Promise<void> {
  const current = await readFile(lockFile, "utf8").catch(() => undefined);
  if (current === owner) await rm(lockFile, { force: true });
}
