// Whether a process id belongs to a running process: owners of lock files (server.ts) and of a
// test run's network namespaces (testing/netns.ts) are checked this way to take over leftovers.

/** True when `pid` runs (EPERM: it runs as another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
