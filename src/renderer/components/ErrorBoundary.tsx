// Keeps one screen's crash from blanking the whole window: the screen shows what went wrong and
// the navigation stays usable.
import { Component, type ReactNode } from "react";
import { ErrorNote } from "./ErrorNote";

export class ErrorBoundary extends Component<
  { children: ReactNode; resetKey: string },
  { error: unknown; resetKey: string }
> {
  override state = { error: undefined as unknown, resetKey: this.props.resetKey };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  static getDerivedStateFromProps(
    props: { resetKey: string },
    state: { error: unknown; resetKey: string },
  ) {
    return props.resetKey !== state.resetKey
      ? { error: undefined, resetKey: props.resetKey }
      : null;
  }

  override render() {
    if (this.state.error)
      return <ErrorNote error={this.state.error} title="This screen stopped working." />;
    return this.props.children;
  }
}
