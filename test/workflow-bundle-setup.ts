import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { writeWorkflowBundle } from '../workers/workflow-bundle.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The workflow bundle, built once per run; every test worker loads it as { codePath }. */
    workflowBundlePath: string;
  }
}

/** Bundles workflows/ once per test run (webpack is the slow part of starting a worker). */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'recon-workflow-bundle-'));
  project.provide('workflowBundlePath', await writeWorkflowBundle(join(dir, 'workflows.js')));
  return () => rmSync(dir, { recursive: true, force: true });
}
