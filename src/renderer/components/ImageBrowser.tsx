// Web mode's file picker for an image variable: a dialog over the project folder listing its
// sub-folders and image files (the main process lists nothing outside the project).
import { useImageListing } from "../hooks/project";
import { BrowseDialog, FolderItems } from "./BrowseDialog";
import { ListState } from "./ListState";

export function ImageBrowser({
  label,
  onPick,
  onClose,
}: {
  label: string;
  onPick: (path: string) => void;
  onClose: () => void;
}) {
  const { open, listing } = useImageListing();
  const data = listing.data;
  const empty = (data?.folders.length ?? 0) + (data?.images.length ?? 0) === 0;
  return (
    <BrowseDialog
      title={`Choose an image for ${label}`}
      path={data?.path}
      parent={data?.parent}
      onOpen={open}
      onClose={onClose}
    >
      <ListState
        label="images"
        isPending={listing.isPending}
        error={listing.error}
        isEmpty={empty}
        empty={<p>No images or folders in here.</p>}
        onRetry={() => void listing.refetch()}
      >
        <ul className="folder-list" aria-label="Folders and images">
          <FolderItems folders={data?.folders} onOpen={open} />
          {data?.images.map((image) => (
            <li key={image.path}>
              <button
                type="button"
                className="folder"
                aria-label={`Use ${image.name}`}
                onClick={() => onPick(image.path)}
              >
                <span className="entry-icon image-icon" aria-hidden="true" />
                {image.name}
              </button>
            </li>
          ))}
        </ul>
      </ListState>
      <div className="dialog-actions">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </BrowseDialog>
  );
}
