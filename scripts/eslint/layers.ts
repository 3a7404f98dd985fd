/**
 * The import direction of the pipeline's stages, enforced by `npm run lint`. Each top-level folder is a
 * layer and names the layers it may import; `workbench/` is an application over reconcile/, beside cli/. Type-only imports may also reach the layers of `typeOnly`:
 * they add no runtime dependency. Folders not listed (test/, bench/, scripts/) may import anything.
 */
import path from 'node:path';
import type { Rule } from 'eslint';

const ALL = [
  'domain',
  'config',
  'observability',
  'db',
  'provider',
  'ingest',
  'reconcile',
  'workbench',
  'workflows',
  'activities',
  'workers',
  'cli',
  'sandbox',
];

interface Layer {
  readonly imports: readonly string[];
  readonly typeOnly?: readonly string[];
}

export const LAYERS: Readonly<Record<string, Layer>> = {
  domain: { imports: [] },
  config: { imports: ['domain'] },
  observability: { imports: ['domain', 'config', 'db'] },
  db: { imports: ['domain', 'observability'] },
  provider: { imports: ['domain', 'config', 'observability'] },
  ingest: { imports: ['domain', 'config', 'observability', 'db', 'provider'] },
  reconcile: { imports: ['domain', 'config', 'observability', 'db', 'provider'] },
  workbench: { imports: ['domain', 'config', 'observability', 'db', 'provider', 'reconcile', 'workers'] },
  workflows: { imports: ['domain'], typeOnly: ['activities'] },
  activities: { imports: ['domain', 'config', 'observability', 'db', 'provider', 'ingest', 'reconcile'] },
  // Everything below the workers but the workbench (an application of its own).
  workers: { imports: ALL.filter((l) => !['workbench', 'workers', 'cli', 'sandbox'].includes(l)) },
  cli: { imports: ALL.filter((l) => l !== 'cli') },
  bin: { imports: ['cli'] },
  sandbox: { imports: ALL.filter((l) => l !== 'cli' && l !== 'sandbox') },
  migrations: { imports: [] },
};

/** The layer of a repository-relative path, or undefined for folders the rule leaves free. */
export function layerOf(file: string): string | undefined {
  const [top] = file.split('/');
  return top !== undefined && Object.hasOwn(LAYERS, top) ? top : undefined;
}

interface MaybeTyped {
  importKind?: string;
  exportKind?: string;
  specifiers?: readonly MaybeTyped[];
}

function isTypeOnly(node: MaybeTyped): boolean {
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const specifiers = node.specifiers ?? [];
  return specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type');
}

export const layersRule: Rule.RuleModule = {
  meta: {
    type: 'problem',
    docs: { description: 'imports point one way, toward domain/ (docs/architecture.md)' },
    schema: [],
    messages: {
      forbidden:
        '{{from}}/ may not import {{to}}/ ({{target}}): imports point toward domain/. Move the shared code down a layer, or see docs/architecture.md.',
    },
  },
  create(context) {
    const root = context.cwd;
    const file = path.relative(root, context.filename).split(path.sep).join('/');
    const from = layerOf(file);
    if (!from) return {};
    const check = (node: Rule.Node, source: unknown, typeOnly: boolean): void => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), source));
      const to = layerOf(target);
      if (!to || to === from) return;
      const rule = LAYERS[from]!;
      if (rule.imports.includes(to)) return;
      if (typeOnly && rule.typeOnly?.includes(to)) return;
      context.report({ node, messageId: 'forbidden', data: { from, to, target } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value, isTypeOnly(node as MaybeTyped)),
      ExportNamedDeclaration: (node) => {
        if (node.source) check(node, node.source.value, isTypeOnly(node as MaybeTyped));
      },
      ExportAllDeclaration: (node) =>
        check(node, node.source.value, (node as MaybeTyped).exportKind === 'type'),
      ImportExpression: (node) => {
        if (node.source.type === 'Literal') check(node, node.source.value, false);
      },
    };
  },
};

export default { rules: { layers: layersRule } };
