// The transport-neutral half of the IPC contract: one handler per method of src/shared/ipc.ts,
// input validated with the method's zod schema, every outcome wrapped as an `IpcResult`, and one
// ordered stream of push events. The Electron adapter (ipc-main.ts) and web mode (web-server.ts)
// both sit on this, so the two transports cannot drift apart.
import {
  ipcInputSchemas,
  isIpcMethod,
  type IpcEventMessage,
  type IpcEventName,
  type IpcEvents,
  type IpcMethodName,
  type IpcOutputs,
  type IpcParsedInput,
  type IpcResult,
} from "../shared/ipc";
import { toIpcError } from "./ipc-errors";

export type IpcHandlers = {
  [M in IpcMethodName]: (input: IpcParsedInput<M>) => Promise<IpcOutputs[M]>;
};

export class IpcEventHub {
  private readonly listeners = new Set<(message: IpcEventMessage) => void>();

  emit<E extends IpcEventName>(event: E, payload: IpcEvents[E]): void {
    const message = { event, payload } as IpcEventMessage;
    for (const listener of this.listeners) listener(message);
  }

  subscribe(listener: (message: IpcEventMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export class IpcRouter {
  constructor(
    private readonly handlers: IpcHandlers,
    readonly events: IpcEventHub,
  ) {}

  async invoke(method: string, input: unknown): Promise<IpcResult<unknown>> {
    if (!isIpcMethod(method)) {
      return {
        ok: false,
        error: { code: "unknown_method", message: `No IPC method "${method}".` },
      };
    }
    try {
      // No input means "no options": every schema accepts {} or names the missing field.
      const parsed = ipcInputSchemas[method].parse(input ?? {});
      const handler = this.handlers[method] as (input: unknown) => Promise<unknown>;
      return { ok: true, data: await handler(parsed) };
    } catch (error) {
      return { ok: false, error: toIpcError(error) };
    }
  }
}
