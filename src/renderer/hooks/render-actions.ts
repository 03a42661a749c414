// The Project screen's actions on the current choices: Render (a queue job) and the equivalent
// CLI command.
import { useMutation } from "@tanstack/react-query";
import { cliCommand, folderName, jobSettingsFrom, renderOptionsProblem } from "../render-plan";
import { useUiStore } from "../store";
import { useProjectScan, useVariableState } from "./project";
import { useSubmitJob } from "./jobs";

export function useRenderActions() {
  const scan = useProjectScan();
  const variables = useVariableState();
  const render = useUiStore((state) => state.render);
  const submit = useSubmitJob();
  const project = scan.data;
  const optionsProblem = renderOptionsProblem(render);
  const blockedBy = !project
    ? "Choose a project first."
    : variables.blocksRender
      ? "Fix the variable values marked above first."
      : optionsProblem;
  const command = project
    ? cliCommand({
        dir: project.root,
        composition: project.composition,
        render,
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
        ...jobSettingsFrom(render),
        variables: variables.values,
        strictVariables: variables.strict,
        title: folderName(project.root),
      },
    });
  };
  return { blockedBy, command, copy, submit, startRender };
}
