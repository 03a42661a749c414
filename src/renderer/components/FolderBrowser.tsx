// Web mode's folder picker: a dialog listing the folders under the configured root.
import { useFolderBrowser } from "../hooks/folders";
import { useUiStore } from "../store";
import { BrowseDialog, FolderItems } from "./BrowseDialog";
import { ListState } from "./ListState";

export function FolderBrowser() {
  const { open, listing } = useFolderBrowser();
  const openProject = useUiStore((state) => state.openProject);
  const close = () => useUiStore.getState().setFolderBrowserOpen(false);
  const data = listing.data;
  return (
    <BrowseDialog
      title="Choose a project folder"
      path={data?.path}
      parent={data?.parent}
      onOpen={open}
      onClose={close}
    >
      <ListState
        label="folders"
        isPending={listing.isPending}
        error={listing.error}
        isEmpty={(data?.folders.length ?? 0) === 0}
        empty={<p>No folders in here.</p>}
        onRetry={() => void listing.refetch()}
      >
        <ul className="folder-list" aria-label="Folders">
          <FolderItems folders={data?.folders} onOpen={open} />
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
    </BrowseDialog>
  );
}
