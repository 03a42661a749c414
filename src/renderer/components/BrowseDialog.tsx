// The frame of the in-app browsers (project folder, image file): a modal dialog with a title, the
// current folder and "Up one folder", and the folder entries of a listing; the rest of the listing
// and the actions are the caller's.
import { useEffect, useId, useRef, type ReactNode } from "react";

export function BrowseDialog({
  title,
  path,
  parent,
  onOpen,
  onClose,
  children,
}: {
  title: string;
  /** The folder shown, once its listing has loaded. */
  path: string | undefined;
  parent: string | null | undefined;
  onOpen: (path: string) => void;
  onClose: () => void;
  children: ReactNode;
}) {
  const titleId = useId();
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);
  return (
    <dialog ref={dialog} className="folder-browser" aria-labelledby={titleId} onClose={onClose}>
      <h2 id={titleId}>{title}</h2>
      <p className="path" aria-label="Current folder">
        {path ?? "…"}
      </p>
      <div className="folder-browser-bar">
        <button
          type="button"
          disabled={parent === undefined || parent === null}
          onClick={() => parent !== undefined && parent !== null && onOpen(parent)}
        >
          Up one folder
        </button>
      </div>
      {children}
    </dialog>
  );
}

/** The sub-folders of the shown folder, as list items that open them. */
export function FolderItems({
  folders,
  onOpen,
}: {
  /** `project`: the folder holds a composition (marked so a creator can tell projects apart). */
  folders: Array<{ name: string; path: string; project?: boolean }> | undefined;
  onOpen: (path: string) => void;
}) {
  return folders?.map((folder) => (
    <li key={folder.path}>
      <button
        type="button"
        className="folder"
        aria-label={folder.name}
        aria-description={folder.project ? "Project: holds a composition" : undefined}
        data-project={folder.project ? "true" : undefined}
        onClick={() => onOpen(folder.path)}
      >
        <span className="entry-icon folder-icon" aria-hidden="true" />
        {folder.name}
        {folder.project ? (
          <span className="badge project-badge" aria-hidden="true">
            Project
          </span>
        ) : null}
      </button>
    </li>
  ));
}
