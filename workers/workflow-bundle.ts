import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

/** Entry point of the workflow code the worker runs (and webpack bundles, resolving './x.ts'). */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/**
 * Bundles workflows/ once per process (webpack, about a second): every worker of the process shares
 * the result. Logs of the bundler are kept quiet unless it fails.
 */
export function buildWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: {
      log: () => {},
      trace: () => {},
      debug: () => {},
      info: () => {},
      warn: () => {},
      error: (message, meta) =>
        process.stderr.write(`workflow bundle: ${message} ${JSON.stringify(meta ?? {})}\n`),
    },
  });
  return bundle;
}

/** Writes the bundle to `file` (for a test run that builds it once and hands the path to every worker). */
export async function writeWorkflowBundle(file: string): Promise<string> {
  const { code } = await buildWorkflowBundle();
  writeFileSync(file, code);
  return file;
}
