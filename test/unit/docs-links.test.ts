import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.ts';
import { DOC_PAGES, ROOT } from '../support/doc-pages.ts';

/**
 * The documentation names what exists: every relative link of README.md and docs/*.md reaches a
 * file (and, with a #fragment, a heading of it), and every `recon …` command it names is a command
 * of the program, with options that command has.
 */

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = headingAnchor(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Markdown links and images outside code: [text](target) and ![alt](target). */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[^]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
}

/** Every `recon …` command line the docs show: in code spans and code blocks (`npx recon` too). */
function reconCommandsOf(text: string): string[] {
  const code = [
    ...[...text.matchAll(/```[^\n]*\n([^]*?)```/g)].map((m) => m[1] as string),
    ...[...text.replace(/```[^]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string),
  ];
  const commands: string[] = [];
  for (const block of code) {
    for (const m of block.matchAll(/(?:^|[\s(;&|"'=$])recon ([a-z][^\n#;&|)"'`]*)/g)) {
      commands.push((m[1] as string).trim());
    }
  }
  return commands;
}

/** The words of a command line that name commands and options, resolved against the program. */
function checkCommand(program: Command, line: string): string | null {
  const words = line.split(/\s+/).filter((w) => w !== '');
  let command = program;
  let i = 0;
  for (; i < words.length; i++) {
    const word = words[i] as string;
    const sub = command.commands.find((c) => c.name() === word);
    if (!sub) break;
    command = sub;
  }
  if (command === program) return `recon ${words[0] ?? ''}: no such command`;
  if (command.commands.length > 0 && words[i] !== undefined && /^[a-z]/.test(words[i] as string)) {
    const given = words[i] as string;
    // `recon schedule describe | pause | unpause` lists several subcommands in one line.
    if (!given.includes('|') && !command.commands.some((c) => c.name() === given) && given !== 'help') {
      return `recon ${words.slice(0, i + 1).join(' ')}: no such command`;
    }
  }
  for (const word of words.slice(i)) {
    if (word === '--') break;
    const flag = /^(--[a-z][a-z0-9-]*)/.exec(word)?.[1];
    if (!flag || flag === '--help' || flag === '--version') continue;
    const known = [
      ...command.options.map((o) => o.long),
      ...(command.parent?.options ?? []).map((o) => o.long),
    ];
    if (!known.includes(flag)) {
      return `recon ${words.slice(0, i).join(' ')}: no option ${flag}`;
    }
  }
  return null;
}

describe('the documentation (README.md, docs/)', () => {
  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const doc of DOC_PAGES) {
      const from = join(ROOT, doc);
      for (const link of linksOf(readFileSync(from, 'utf8'))) {
        if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
        const [path, fragment] = link.split('#') as [string, string | undefined];
        const target = path === '' ? from : resolve(dirname(from), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${doc}: ${link} (no ${relative(ROOT, target)})`);
          continue;
        }
        if (
          fragment &&
          statSync(target).isFile() &&
          target.endsWith('.md') &&
          !anchorsOf(target).has(fragment)
        ) {
          broken.push(`${doc}: ${link} (no heading #${fragment} in ${relative(ROOT, target)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only recon commands and options that exist', () => {
    const program = buildProgram();
    const wrong: string[] = [];
    for (const doc of DOC_PAGES) {
      for (const line of reconCommandsOf(readFileSync(join(ROOT, doc), 'utf8'))) {
        const problem = checkCommand(program, line);
        if (problem) wrong.push(`${doc}: ${problem} (in "recon ${line}")`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('keeps README.md short: under 250 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThan(250);
  });
});
