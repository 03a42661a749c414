// "… was added to the queue", with a way there: after Render on the Project screen and after
// Render again in History.
import { useUiStore } from "../store";

export function QueuedNote({ title }: { title: string }) {
  const show = useUiStore((state) => state.show);
  return (
    <p className="ok" role="status">
      “{title}” was added to the queue.{" "}
      <button type="button" className="link" onClick={() => show("queue")}>
        Show the queue
      </button>
    </p>
  );
}
