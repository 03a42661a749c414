// The "New video" gallery (SPEC.md section 10): the starter templates, each tile's picture (made by
// the main process from the template itself on first ask, then kept), and making a new project from
// one, which then opens like any chosen folder.
import { useMutation, useQuery } from "@tanstack/react-query";
import { desktopApi } from "../transport";
import { useUiStore } from "../store";

export function useStarterTemplates() {
  return useQuery({
    queryKey: ["gallery.list"],
    queryFn: () => desktopApi()["gallery.list"](),
    staleTime: Infinity,
  });
}

export function useTemplatePoster(name: string) {
  return useQuery({
    queryKey: ["gallery.poster", name],
    queryFn: () => desktopApi()["gallery.poster"]({ name }),
    staleTime: Infinity,
    // The first opening draws the tiles one after another; a request that waited too long is
    // asked again and joins the drawing already under way (or finds the picture made).
    retry: 4,
  });
}

export function useCreateFromTemplate() {
  const openProject = useUiStore((state) => state.openProject);
  return useMutation({
    mutationFn: (input: { name: string; folderName: string }) =>
      desktopApi()["gallery.create"](input),
    onSuccess: ({ dir }) => openProject(dir),
  });
}
