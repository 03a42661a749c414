// Web mode's folder picker: a dialog listing the folders under the configured root.
import { useEffect, useRef } from "react";
import { useFolderBrowser } from "../hooks/folders";
import { useUiStore } from "../store";
import { ListState } from "./ListState";

export function FolderBrowser() {
  const { open, listing } = useFolderBrowser();
  const openProject = useUiStore((state) => state.openProject);
  const close = () => useUiStore.getState().setFolderBrowserOpen(false);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);
  const data = listing.data;
  return (
    <dialog
      ref={dialog}
      className="folder-browser"
      aria-labelledby="folder-browser-title"
      onClose={close}
    >
      <h2 id="folder-browser-title">Choose a project folder</h2>
      <p className="path" aria-label="Current folder">
        {data?.path ?? "…"}
      </p>
      <div className="folder-browser-bar">
        <button type="button" disabled={!data?.parent} onClick={() => open(data?.parent)}>
          Up one folder
        </button>
      </div>
      <ListState
        label="folders"
        isPending={listing.isPending}
        error={listing.error}
        isEmpty={(data?.folders.length ?? 0) === 0}
        empty={<p>No folders in here.</p>}
        onRetry={() => void listing.refetch()}
      >
        <ul className="folder-list" aria-label="Folders">
          {data?.folders.map((folder) => (
            <li key={folder.path}>
              <button type="button" className="folder" onClick={() => open(folder.path)}>
                <span className="entry-icon folder-icon" aria-hidden="true" />
                {folder.name}
              </button>
            </li>
          ))}
        </ul>
      </ListState>
      <div className="dialog-actions">
        <button type="button" onClick={close}>
          Cancel
        </button>
        <button
          type="button"
          className="primary"
          disabled={!data}
          onClick={() => data && openProject(data.path)}
        >
          Use this folder
        </button>
      </div>
    </dialog>
  );
}
