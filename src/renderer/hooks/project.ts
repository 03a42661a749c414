// The open project: its scan (size, duration, variables, compositions), the preview URL, the
// variable issues of the current values (the shared validator, so the form and the service agree)
// and the dry run.
import { useEffect, useMemo, useState } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import {
  resolveVariables,
  blockingIssues,
  validateVariables,
  type VariableIssue,
  type VariableValues,
} from "../../shared/variables";
import type { QueuedRenderSettings } from "../../shared/ipc";
import { brandValues } from "../../shared/brand";
import { desktopApi } from "../transport";
import { useSettings } from "./account";
import { useUiStore } from "../store";

export function useProjectScan() {
  const dir = useUiStore((state) => state.projectDir);
  const composition = useUiStore((state) => state.composition);
  return useQuery({
    queryKey: ["project.scan", dir, composition],
    queryFn: () =>
      desktopApi()["project.scan"]({ dir: dir!, ...(composition ? { composition } : {}) }),
    enabled: Boolean(dir),
    retry: false,
  });
}

export function usePreviewUrl(composition: string | undefined) {
  const dir = useUiStore((state) => state.projectDir);
  return useQuery({
    queryKey: ["project.previewUrl", dir, composition],
    queryFn: () =>
      desktopApi()["project.previewUrl"]({ dir: dir!, ...(composition ? { composition } : {}) }),
    enabled: Boolean(dir && composition),
    retry: false,
  });
}

/**
 * What svc may not render faithfully in the composition (`svc check`, run by the main process), for
 * the values the preview shows. A check loads the page in a browser of its own, so it runs again
 * only when the values have settled, the composition changes, or the window regains focus (the
 * project may have been edited meanwhile).
 */
export function useProjectCheck(composition: string | undefined, values: VariableValues) {
  const dir = useUiStore((state) => state.projectDir);
  return useQuery({
    queryKey: ["project.check", dir, composition, values],
    queryFn: () =>
      desktopApi()["project.check"]({
        dir: dir!,
        ...(composition ? { composition } : {}),
        variables: values,
      }),
    enabled: Boolean(dir && composition),
    retry: false,
    staleTime: 10_000,
  });
}

/** The creator's values checked against the schema, by variable id, plus the merged values. */
/**
 * The composition's variables and their values: the brand kit's (Settings -> Brand) for the brand
 * variables it declares, under the values the creator changed for this project, which win.
 */
export function useVariableState() {
  const scan = useProjectScan();
  const own = useUiStore((state) => state.values);
  const strict = useUiStore((state) => state.strictVariables);
  const brand = useSettings().data?.brand;
  return useMemo(() => {
    const definitions = scan.data?.variables ?? [];
    const values = brand ? { ...brandValues(brand, definitions), ...own } : own;
    const issues = validateVariables(definitions, values);
    const byId = new Map<string, VariableIssue>(issues.map((issue) => [issue.id, issue]));
    return {
      definitions,
      values,
      /** Only the values the creator changed for this project. */
      own,
      issues,
      issueFor: (id: string) => byId.get(id),
      resolved: resolveVariables(definitions, values),
      blocksRender: blockingIssues(issues, strict).length > 0,
      strict,
    };
  }, [scan.data, own, brand, strict]);
}

/** `value`, once it has stopped changing for `delayMs` (typing must not reload the preview). */
export function useSettled<T>(value: T, delayMs = 250): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}

export function useDryRun() {
  const dir = useUiStore((state) => state.projectDir);
  const composition = useUiStore((state) => state.composition);
  const values = useUiStore((state) => state.values);
  return useMutation({
    mutationKey: ["project.dryRun", dir, composition],
    mutationFn: () =>
      desktopApi()["project.dryRun"]({
        dir: dir!,
        ...(composition ? { composition } : {}),
        variables: values,
      }),
  });
}

/** Variable values to and from a JSON file (the same shape as the CLI's --variables-file). */
export function useVariableValuesFile() {
  const replaceValues = useUiStore((state) => state.replaceValues);
  const importFile = useMutation({
    mutationFn: async (file: File) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(await file.text());
      } catch {
        throw new Error(`${file.name} is not JSON.`);
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
        throw new Error(`${file.name} must hold one JSON object of variable values.`);
      replaceValues(parsed as VariableValues);
    },
  });
  const exportValues = (values: VariableValues) => {
    const blob = new Blob([`${JSON.stringify(values, null, 2)}\n`], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "variables.json";
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  };
  return { importFile, exportValues };
}

/**
 * An image variable's "Choose…": Electron's native dialog (the main process checks the file is an
 * image inside the project and answers its project-relative path); in web mode the answer is
 * "browse" and the in-app image browser opens on the project folder.
 */
export function usePickImage(onPicked: (path: string) => void) {
  const dir = useUiStore((state) => state.projectDir);
  const [browsing, setBrowsing] = useState(false);
  const pick = useMutation({
    mutationFn: () => desktopApi()["project.pickImage"]({ dir: dir! }),
    onSuccess: (result) => {
      if (result.kind === "picked") onPicked(result.path);
      if (result.kind === "browse") setBrowsing(true);
    },
  });
  return { pick, browsing, closeBrowser: () => setBrowsing(false) };
}

/** One folder of the project with its image files, for the in-app image browser. */
export function useImageListing() {
  const dir = useUiStore((state) => state.projectDir);
  const [path, setPath] = useState<string | undefined>(undefined);
  const listing = useQuery({
    queryKey: ["project.listImages", dir, path],
    queryFn: () => desktopApi()["project.listImages"]({ dir: dir!, ...(path ? { path } : {}) }),
    enabled: Boolean(dir),
    retry: false,
  });
  return { open: setPath, listing };
}

/**
 * The time a render with these settings would take on this computer (`svc render --quote`, run by
 * the main process): asked for with a button, since it starts browsers and draws sample frames.
 */
export function useLocalQuote() {
  const dir = useUiStore((state) => state.projectDir);
  return useMutation({
    mutationFn: (input: { composition: string; settings: QueuedRenderSettings }) =>
      desktopApi()["project.quote"]({ dir: dir!, ...input }),
  });
}
