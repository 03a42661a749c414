// Named limits shared by the CLI, the app, the engine and the service (SPEC.md sections 3-6).

/** The embedded render service listens on 127.0.0.1 at this port (SPEC.md section 0). */
export const LOCAL_SERVICE_PORT = 7733;

export const FPS_MIN = 1;
export const FPS_MAX = 240;
export const DEFAULT_FPS = 30;
/** A GIF's frame delays are whole hundredths of a second; browsers slow delays under 2 down. */
export const GIF_MAX_FPS = 50;

/** Largest project archive the service accepts: 200 MiB. */
export const UPLOAD_LIMIT_BYTES = 200 * 1024 * 1024;

/** Billing: 1 credit per started second of output, x1.5 for 4k. */
export const CREDITS_PER_SECOND = 1;
export const FOUR_K_MULTIPLIER = 1.5;

export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_:.-]{1,255}$/;

export const DEFAULT_POLL_INTERVAL_SECONDS = 10;
export const DEFAULT_MAX_WAIT_MINUTES = 60;
