// Device sign-in for SSH sessions (RFC 8628): request a code, show it, poll the token endpoint
// at the interval the service asks (slower on slow_down) until it is approved, denied or expired.
// Sleeping is injected.
import {
  CLI_CLIENT_ID,
  DEFAULT_SCOPE,
  DEVICE_CODE_GRANT,
  OAUTH_PATHS,
  deviceAuthorizationSchema,
  tokenResponseSchema,
  type DeviceAuthorization,
  type TokenResponse,
} from "../../shared/oauth";
import { sleep as defaultSleep, type Sleep } from "../backoff";
import { ClientError, registerSecret } from "../errors";
import { HINTS, oauthPost, remember } from "./protocol";

export async function requestDeviceCode(
  baseUrl: string,
  signal?: AbortSignal,
): Promise<DeviceAuthorization> {
  const authorization = await oauthPost(
    baseUrl,
    OAUTH_PATHS.deviceCode,
    { client_id: CLI_CLIENT_ID, scope: DEFAULT_SCOPE },
    deviceAuthorizationSchema,
    signal,
  );
  registerSecret(authorization.device_code);
  return authorization;
}

export interface DeviceLoginOptions {
  baseUrl: string;
  /** Show the person the URL and the code. */
  onCode: (authorization: DeviceAuthorization) => void;
  /** Told each wait before a poll, in ms (after slow_down it grows by 5 s). */
  onWait?: (ms: number) => void;
  sleep?: Sleep;
  now?: () => number;
  signal?: AbortSignal;
}

/** Polls the token endpoint honouring `interval` and `slow_down` until approved or refused. */
export async function loginWithDevice(options: DeviceLoginOptions): Promise<TokenResponse> {
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const authorization = await requestDeviceCode(options.baseUrl, options.signal);
  options.onCode(authorization);
  const deadline = now() + authorization.expires_in * 1000;
  let intervalMs = authorization.interval * 1000;
  for (;;) {
    options.onWait?.(intervalMs);
    await sleep(intervalMs, options.signal);
    if (now() > deadline) {
      throw new ClientError(
        "expired_token",
        "The code expired before it was approved.",
        HINTS.expired_token,
      );
    }
    try {
      return remember(
        await oauthPost(
          options.baseUrl,
          OAUTH_PATHS.token,
          {
            grant_type: DEVICE_CODE_GRANT,
            device_code: authorization.device_code,
            client_id: CLI_CLIENT_ID,
          },
          tokenResponseSchema,
          options.signal,
        ),
      );
    } catch (error) {
      if (!(error instanceof ClientError)) throw error;
      if (error.code === "authorization_pending") continue;
      if (error.code === "slow_down") {
        intervalMs += 5_000;
        continue;
      }
      throw error;
    }
  }
}
