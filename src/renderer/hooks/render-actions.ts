// The Project screen's actions on the current choices: Render (a queued render) and the equivalent
// CLI command (only for choices that can render: no "--fps NaN"). Queued renders are named after
// the project and, when the composition has one, its title variable (the output file's name too).
import { useMutation } from "@tanstack/react-query";
import {
  cliCommand,
  folderName,
  queuedRenderSettingsFrom,
  queuedRenderTitle,
  renderOptionsProblem,
} from "../render-plan";
import { useUiStore } from "../store";
import { useProjectScan, useVariableState } from "./project";
import { useSubmitQueuedRender } from "./queued-renders";
import { cueProblem, useCaptionsStore, useProjectCaptions } from "./captions";

export function useRenderActions() {
  const scan = useProjectScan();
  const variables = useVariableState();
  const render = useUiStore((state) => state.render);
  const submit = useSubmitQueuedRender();
  const project = scan.data;
  const projectDir = useUiStore((state) => state.projectDir);
  const captions = useProjectCaptions(projectDir);
  const captionsInvalid = useCaptionsStore(
    (state) => state.projectDir === projectDir && state.cues.some((cue) => cueProblem(cue)),
  );
  const facts = { aspectRatio: project?.aspectRatio, duration: project?.duration };
  const optionsProblem = Number.isFinite(render.fps)
    ? renderOptionsProblem(render, facts)
    : "Fix Frames per second in Render options first.";
  const blockedBy = !project
    ? "Choose a project first."
    : variables.blocksRender
      ? "Fix the variable values marked above first."
      : captionsInvalid
        ? "Fix the captions marked above first."
        : optionsProblem;
  const command =
    project && !optionsProblem
      ? cliCommand({
          dir: project.root,
          composition: project.composition,
          render,
          facts,
          values: variables.values,
          strictVariables: variables.strict,
        })
      : undefined;
  const copy = useMutation({
    mutationFn: async () => {
      if (command) await navigator.clipboard.writeText(command);
    },
  });
  const startRender = () => {
    if (!project || blockedBy) return;
    submit.mutate({
      dir: project.root,
      composition: project.composition,
      settings: {
        ...queuedRenderSettingsFrom(render, facts),
        variables: variables.values,
        strictVariables: variables.strict,
        title: queuedRenderTitle(folderName(project.root), variables.resolved),
        ...(captions ? { captions: { cues: captions.cues, style: captions.style } } : {}),
      },
    });
  };
  return { blockedBy, command, copy, submit, startRender };
}
