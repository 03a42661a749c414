// Web mode's folder picker: a dialog listing the folders of the allowed places (home and the
// user's own drives), folders that hold a composition marked "Project", and the shown folder's
// HTML files (opening one opens the folder with it as the composition). Up from the top of a
// place leads to the list of places, which says why nothing else is shown.
import { useFolderBrowser } from "../hooks/folders";
import { useUiStore } from "../store";
import { BrowseDialog, FolderItems } from "./BrowseDialog";
import { ListState } from "./ListState";

export function FolderBrowser() {
  const { open, listing } = useFolderBrowser();
  const openProject = useUiStore((state) => state.openProject);
  const setComposition = useUiStore((state) => state.setComposition);
  const close = () => useUiStore.getState().setFolderBrowserOpen(false);
  const data = listing.data;
  const inPlaces = data !== undefined && data.path === undefined;
  const openWith = (dir: string, composition: string) => {
    openProject(dir);
    setComposition(composition);
  };
  const empty = (data?.folders.length ?? 0) === 0 && (data?.htmlFiles.length ?? 0) === 0;
  return (
    <BrowseDialog
      title="Choose a project folder"
      path={inPlaces ? "Your places" : data?.path}
      parent={data?.parent}
      onOpen={open}
      onClose={close}
    >
      {inPlaces ? <p className="muted folder-limit">{data.limit}</p> : null}
      <ListState
        label="folders"
        isPending={listing.isPending}
        error={listing.error}
        isEmpty={empty}
        empty={<p>No folders or compositions in here.</p>}
        onRetry={() => void listing.refetch()}
      >
        <ul className="folder-list" aria-label="Folders">
          <FolderItems folders={data?.folders} onOpen={open} />
          {data?.path
            ? data.htmlFiles.map((file) => (
                <li key={file}>
                  <button
                    type="button"
                    className="folder composition-file"
                    aria-label={file}
                    aria-description="Composition: opens this folder with it"
                    title={`Open this folder with ${file} as the composition`}
                    onClick={() => openWith(data.path!, file)}
                  >
                    <span className="entry-icon file-icon" aria-hidden="true" />
                    {file}
                    <span className="badge project-badge" aria-hidden="true">
                      Composition
                    </span>
                  </button>
                </li>
              ))
            : null}
        </ul>
      </ListState>
      <div className="dialog-actions">
        <button type="button" onClick={close}>
          Cancel
        </button>
        <button
          type="button"
          className="primary"
          disabled={!data?.path}
          onClick={() => data?.path && openProject(data.path)}
        >
          Use this folder
        </button>
      </div>
    </BrowseDialog>
  );
}
